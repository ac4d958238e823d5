/**
 * Mutual exclusion per key (a table id) between the writer's schema changes, seals and
 * compactions of one table. Waiters are served in arrival order.
 */
export class KeyedMutex<K> {
  private readonly tails = new Map<K, Promise<void>>();

  async lock(key: K): Promise<() => void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => current);
    this.tails.set(key, tail);
    await previous;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }

  /** Locks several keys in a stable order (no deadlock between two multi-key holders). */
  async lockAll(keys: Iterable<K>): Promise<() => void> {
    const sorted = [...new Set(keys)].sort();
    const releases: (() => void)[] = [];
    for (const k of sorted) releases.push(await this.lock(k));
    return () => {
      for (const r of releases.reverse()) r();
    };
  }

  async with<T>(key: K, fn: () => Promise<T>): Promise<T> {
    const release = await this.lock(key);
    try {
      return await fn();
    } finally {
      release();
    }
  }
}
