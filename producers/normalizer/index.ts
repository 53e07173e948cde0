/** Public API of the normalizer (see FIELDS.md for the field mapping of each source). */
export {
  isNormalizeError,
  NORMALIZE_ERROR_CODES,
  NormalizeError,
  type NormalizeErrorCode,
} from './errors.ts';
export { type MapContext, type Mapper, mapAll, NORMALIZER_VERSION } from './mapper.ts';
export {
  type NormalizeOptions,
  type NormalizeRequest,
  type NormalizeResult,
  normalizeBatch,
  type RejectedEvent,
} from './normalize-batch.ts';
export { MAPPERS, mapperFor } from './registry.ts';
