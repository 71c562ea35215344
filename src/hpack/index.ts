/**
 * HPACK (RFC 7541), as much as berth needs on both sides of HTTP/2: the
 * registration client decodes replies (registration/h2-connection.ts) and
 * encodes its requests (h2-frames.ts); the unix-socket gRPC transport
 * follows clients' header blocks to rewrite one field (unix-grpc). No
 * dependency: the registration path loads this, not grpc-js.
 */
export {
  AUTHORITY_INDEX,
  type DecodedField,
  DynamicTable,
  decodeBlock,
  encodeInteger,
  encodeLiteral,
  HpackError,
} from './hpack.js';
export { HuffmanError, huffmanDecode, huffmanEncode } from './huffman.js';
