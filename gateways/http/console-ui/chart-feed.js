// The unified stream of one coin through the dashboard proxy, as an EventSource: the cookie
// session goes with it, and after a dropped connection the browser reconnects on its own with
// Last-Event-ID (the proxy forwards it), so the chart resumes without a gap or a duplicate.
// Terminal errors other than `reconnect` (an ended session, a plan without the stream) end it.

const RESUMABLE = new Set(['reconnect']);

/** Opens the feed; `on` receives {event}, {state, text}; returns a close function. */
export function openFeed(coin, on) {
  const es = new EventSource(`/api/v1/unified/stream?coin=${encodeURIComponent(coin)}`);
  let ended = false;
  const end = (text) => {
    ended = true;
    es.close();
    on.state('ended', text);
  };
  es.onopen = () => on.state('live', 'Live');
  es.onmessage = (m) => {
    try {
      on.event(JSON.parse(m.data), m.lastEventId);
    } catch {
      // not an event: ignored
    }
  };
  es.addEventListener('error', (e) => {
    if (ended) return;
    if (typeof e.data === 'string') {
      const err = JSON.parse(e.data);
      if (err.terminal && !RESUMABLE.has(err.code)) end(`Stream ended: ${err.message} (${err.code})`);
      else on.state('reconnecting', `Reconnecting: ${err.message}`);
      return;
    }
    // A connection error: the browser retries unless the server refused (then it is closed).
    if (es.readyState === EventSource.CLOSED)
      end('Stream ended: the session is no longer valid; log in again');
    else on.state('reconnecting', 'Reconnecting…');
  });
  return () => {
    ended = true;
    es.close();
  };
}
