/**
 * Ties HTTP/1.1 exchanges to their socket's close. Node queues the
 * responses of pipelined requests behind the first and never emits `close`
 * or `finish` on them when the socket goes, so each exchange on a socket is
 * registered here and told when it closes. One listener per socket, not per
 * exchange (a long pipeline would otherwise pile listeners on it).
 */
import type { Socket } from 'node:net';

/** What is told of the socket's close (an exchange's life). */
export interface SocketWatcher {
  gone(): void;
}

const watched = new WeakMap<Socket, Set<SocketWatcher>>();

/**
 * Tells `w` when `socket` closes, until `done` is called.
 * @returns `done`: stop watching (the exchange's response closed on its own)
 */
export function watchSocket(socket: Socket, w: SocketWatcher): () => void {
  let set = watched.get(socket);
  if (set === undefined) {
    const fresh = new Set<SocketWatcher>();
    set = fresh;
    watched.set(socket, fresh);
    socket.once('close', () => {
      watched.delete(socket);
      for (const x of fresh) x.gone();
      fresh.clear();
    });
  }
  set.add(w);
  const mine = set;
  return () => {
    mine.delete(w);
  };
}
