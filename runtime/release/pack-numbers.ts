// A small number per pack path for the life of the process, so cache keys are integers built without a string per
// lookup. One numbering for every cache: bucket packs and shard packs have different paths, and a path names its
// stamp while pack names are content hashes, so a number never changes meaning.
const numbers = new Map<string, number>();

export function packNumber(path: string): number {
  let n = numbers.get(path);
  if (n === undefined) numbers.set(path, (n = numbers.size));
  return n;
}
