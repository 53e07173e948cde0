/**
 * The socket under a `ws` WebSocket, for writing a list of messages that is already WebSocket
 * frames (messages.ts) in one call: at 1,000 connections the edge writes each flush's shared list
 * to every socket, and `ws.send` per message framed it again per socket (a header Buffer, then a
 * corked two-buffer writev) where one `write` of the shared bytes does (issue 29).
 *
 * This reaches into `ws`'s internals, so the version is pinned (package.json: exactly 8.23.0) and
 * the assumptions are tested (test/unit/ws-raw-socket.test.ts): `_socket` is the net.Socket the
 * Sender writes to, and the Sender writes straight through while `_state` is 0 (DEFAULT) and
 * `_queue` is empty; it queues only while it deflates (the edge disables permessage-deflate) or
 * reads a Blob (the edge never sends one). Written there, the bytes count in `bufferedAmount`
 * (the socket's writable length), as the wire's backpressure needs. Whenever the shape is not
 * exactly that, `null`, and the wire sends each message through `ws.send` (the fallback).
 */
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

type WsInternals = { _socket?: Socket | null; _sender?: { _state?: unknown; _queue?: unknown } | null };

/** The socket to write frames to now, or null when `ws.send` must be used. */
export function rawSocketOf(ws: WebSocket): Socket | null {
  const { _socket: socket, _sender: sender } = ws as unknown as WsInternals;
  if (!socket || !sender || sender._state !== 0) return null;
  const queue = sender._queue;
  return Array.isArray(queue) && queue.length === 0 ? socket : null;
}
