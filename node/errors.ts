// Why: PolarError moved to protocol/errors.ts (both services throw it); this re-export keeps the
// node's imports working until they are rewritten to import from protocol/ directly.
export { ERROR_CODES, PolarError, asPolarError, describeCause, type ErrorCode } from "../protocol/errors.ts";
