// Stands in for @ag-ui/proto in the page's bundle (see vite.config.js).
// HttpAgent asks the server for text/event-stream only (its Accept header),
// so the protobuf decoder, about 170 kB of generated code, is never reached.
// Should a server answer with protobuf anyway, the run fails with this
// error instead of misreading the bytes.
export const AGUI_MEDIA_TYPE = 'application/vnd.ag-ui.event+proto';

export class AGUIUnknownEventTypeError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AGUIUnknownEventTypeError';
  }
}

export function decode() {
  throw new Error('This page reads AG-UI over text/event-stream only; the server sent protobuf.');
}

export function encode() {
  throw new Error('This page does not encode AG-UI protobuf.');
}
