/**
 * The HTTP plumbing of the service clients: JSON requests with the caller's credentials, and
 * every non-2xx turned into an MdpError with the error body's `code` and `request_id`.
 * fetch only: browsers use it too.
 */
import { errorFromResponse, networkError } from './errors.ts';

export type HttpClientOptions = {
  /** `{base_url}`, e.g. `http://127.0.0.1:8080`. */
  url: string;
  fetch?: typeof fetch;
};

export type RequestOptions = {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
};

export class HttpClient {
  readonly baseUrl: string;
  private readonly doFetch: typeof fetch;

  constructor(
    opts: HttpClientOptions,
    /** Credential headers, read on every request (a login may change them). */
    private readonly credentials: () => Record<string, string>,
  ) {
    this.baseUrl = opts.url.replace(/\/+$/, '');
    this.doFetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** An absolute URL for `path` (absolute URLs, such as a `download_url`, are kept). */
  url(path: string, query?: RequestOptions['query']): string {
    const url = new URL(/^https?:\/\//.test(path) ? path : `${this.baseUrl}${path}`);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  /** The response of a successful request; throws MdpError otherwise. */
  async send(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { ...this.credentials(), ...opts.headers };
    const init: RequestInit = { method, headers };
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    }
    if (opts.signal) init.signal = opts.signal;
    let res: Response;
    try {
      res = await this.doFetch(this.url(path, opts.query), init);
    } catch (err) {
      throw networkError(err);
    }
    if (!res.ok) throw await errorFromResponse(res);
    return res;
  }

  /** The JSON answer of a successful request (undefined for 204). */
  async json<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.send(method, path, opts);
    if (res.status === 204) return undefined as T;
    return (await res.json()) as T;
  }
}

/** A body to read as it arrives, with the length the server announced. */
export type Download = {
  body: ReadableStream<Uint8Array>;
  /** `Content-Length`, bytes; null when the server did not say. */
  contentLength: number | null;
  response: Response;
};

export function asDownload(res: Response): Download {
  if (!res.body) throw new Error('response without a body');
  const length = res.headers.get('content-length');
  return { body: res.body, contentLength: length === null ? null : Number(length), response: res };
}
