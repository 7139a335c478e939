// Where `noshell bench` writes its results when --out is not given. From an
// installed package, a path relative to the package (the old bench/results)
// lands inside node_modules, where the next install deletes it and which may
// not be writable: the results go to the directory the user ran it from.
import path from 'node:path';

export function defaultOutDir(cwd: string = process.cwd()): string {
  return path.resolve(cwd, 'noshell-bench-results');
}
