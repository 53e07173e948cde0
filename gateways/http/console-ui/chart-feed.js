// The unified stream of one coin through the dashboard proxy, as an EventSource: the cookie
// session goes with it, and after a dropped connection the browser reconnects on its own with
// Last-Event-ID (the proxy forwards it), so the chart resumes without a gap or a duplicate.
// Terminal errors other than `reconnect` (an ended session, a plan without the stream) end it;
// a non-terminal one (`feed_stale`, `coin_not_found`) leaves it live and says so until
// `feed_recovered`. The query's `from` stays in the URL: a reconnect's Last-Event-ID wins.

const RESUMABLE = new Set(['reconnect']);

/**
 * Opens the feed of `query` ({coin, event_type?, from?}); `on` receives {event}, {state, text};
 * returns a close function.
 */
export function openFeed(query, on) {
  const es = new EventSource(`/api/v1/unified/stream?${new URLSearchParams(query)}`);
  let ended = false;
  let warned = false;
  const end = (text) => {
    ended = true;
    es.close();
    on.state('ended', text);
  };
  es.onopen = () => {
    warned = false;
    on.state('live', 'Live');
  };
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
      else if (err.terminal) on.state('reconnecting', `Reconnecting: ${err.message}`);
      else {
        warned = true;
        on.state('live', `Live · ${err.message}`);
      }
      return;
    }
    // A connection error: the browser retries unless the server refused (then it is closed).
    if (es.readyState === EventSource.CLOSED)
      end('Stream ended: the session is no longer valid; log in again');
    else on.state('reconnecting', 'Reconnecting…');
  });
  es.addEventListener('notice', (m) => {
    if (warned && JSON.parse(m.data).code === 'feed_recovered') {
      warned = false;
      on.state('live', 'Live');
    }
  });
  return () => {
    ended = true;
    es.close();
  };
}
