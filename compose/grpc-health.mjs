// gRPC health check for compose/smoke.sh where grpcurl is absent (it is in no Debian release): the
// standard grpc.health.v1.Health/Check with the repository's own grpc-js and grpc-health-check,
// over TLS trusting the certificate the smoke test made. Prints the status; exit 0 when SERVING.
//   node compose/grpc-health.mjs <host:port> <service> <ca.pem> [server name (SNI and :authority)]
import { readFileSync } from 'node:fs';
import { credentials, makeClientConstructor } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';

const [target = 'localhost:50051', name = 'price.PriceService', caFile, serverName] = process.argv.slice(2);
const Health = makeClientConstructor(healthService, 'grpc.health.v1.Health');
const ca = caFile ? readFileSync(caFile) : null;
const options = serverName
  ? { 'grpc.ssl_target_name_override': serverName, 'grpc.default_authority': serverName }
  : {};
const client = new Health(target, credentials.createSsl(ca), options);
client.check({ service: name }, { deadline: Date.now() + 10_000 }, (err, res) => {
  if (err) {
    console.log(`error ${err.code}: ${err.details}`);
    process.exit(1);
  }
  console.log(res.status);
  process.exit(res.status === 'SERVING' ? 0 : 1);
});
