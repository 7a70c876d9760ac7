// Why: a condition that holds for the whole process (no bwrap, a missing tool) is worth one line
// on stderr, not one per sandbox or per rollout; every such warning goes through here.

const said = new Set<string>();

/** Prints `message` to stderr the first time this process asks; later calls with it are dropped. */
export function warnOnce(message: string): void {
  if (said.has(message)) return;
  said.add(message);
  console.warn(message);
}
