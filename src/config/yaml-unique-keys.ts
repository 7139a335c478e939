// Duplicate map keys of a parsed YAML document, in one pass. The YAML
// library's own check (uniqueKeys) compares each key with every earlier key
// of its map: a 128 KiB map of 16,000 distinct keys took ~9 s, and a 4 MiB
// one would hold the event loop (a reload) for hours. Here each map keeps a
// Set of its keys' values, so the check costs a lookup per key. The walk is
// iterative: nesting deep enough to exhaust the stack is just more nodes.
import { isCollection, isMap, isPair, isScalar, type Document, type Node } from 'yaml';

/** The first `limit` offsets (in the file's order) of keys that repeat an earlier key of their map; `count`: all of them. */
export interface DuplicateKeys {
  offsets: number[];
  count: number;
}

/** The key's identity as the library compares scalars: same value, same type (1 and "1" differ). */
function scalarKey(value: unknown): string | null {
  if (value === null) return 'null';
  if (typeof value === 'string') return `string:${value}`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return `${typeof value}:${value.toString()}`;
  }
  return null;
}

/** Inserts `offset` into the sorted `offsets` if it is among the `limit` smallest (limit is small). */
function keepFirst(offsets: number[], offset: number, limit: number): void {
  if (offsets.length === limit && offset >= offsets[limit - 1]) return;
  let i = offsets.length;
  while (i > 0 && offsets[i - 1] > offset) i--;
  offsets.splice(i, 0, offset);
  if (offsets.length > limit) offsets.pop();
}

export function duplicateKeys(doc: Document, limit: number): DuplicateKeys {
  const found: DuplicateKeys = { offsets: [], count: 0 };
  const stack: unknown[] = [doc.contents];
  // A node reached twice (it cannot be, without aliases, which are not followed) is walked once.
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const node = stack.pop();
    if (!isCollection(node) || seen.has(node)) continue;
    seen.add(node);
    const keys = isMap(node) ? new Set<string>() : null;
    for (const item of node.items as unknown[]) {
      if (!isPair(item)) {
        stack.push(item);
        continue;
      }
      const key = item.key as Node | null;
      if (keys !== null && isScalar(key)) {
        const id = scalarKey(key.value);
        if (id !== null) {
          if (keys.has(id)) {
            found.count++;
            keepFirst(found.offsets, key.range?.[0] ?? -1, limit);
          } else {
            keys.add(id);
          }
        }
      }
      stack.push(key, item.value);
    }
  }
  return found;
}
