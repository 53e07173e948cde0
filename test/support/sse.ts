/** A small SSE reader over fetch (a real HTTP client), for tests that cut and resume streams. */
export type SseMessage = { event: string; id: string | null; data: string };

export type SseStream = {
  status: number;
  headers: Headers;
  /** Resolves when the server ends the stream or `abort()` is called. */
  done: Promise<void>;
  abort(): void;
};

export async function openSse(
  url: string,
  onMessage: (m: SseMessage) => void,
  headers: Record<string, string> = {},
): Promise<SseStream> {
  const ctl = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ctl.signal });
  if (res.status !== 200 || !res.body) {
    return { status: res.status, headers: res.headers, done: Promise.resolve(), abort: () => ctl.abort() };
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const done = (async () => {
    let buf = '';
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) return;
        buf += value;
        let idx = buf.indexOf('\n\n');
        while (idx >= 0) {
          const block = buf.slice(0, idx);
          buf = buf.slice(idx + 2);
          const msg = parseBlock(block);
          if (msg) onMessage(msg);
          idx = buf.indexOf('\n\n');
        }
      }
    } catch {
      // aborted or cut: the caller decides what that means
    }
  })();
  return { status: res.status, headers: res.headers, done, abort: () => ctl.abort() };
}

function parseBlock(block: string): SseMessage | null {
  let event = 'message';
  let id: string | null = null;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':') || line === '') continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'id') id = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0 && id === null) return null;
  return { event, id, data: data.join('\n') };
}
