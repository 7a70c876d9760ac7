// Why: CLIs take the task as a positional argument, and their argument parsers read a leading
// "-" as a flag (all of them) or a leading "@" as a file to attach (pi). One leading space keeps
// such an instruction a plain prompt; every other instruction is passed byte for byte.
export function promptArgument(instruction: string): string {
  return /^[-@]/.test(instruction) ? ` ${instruction}` : instruction;
}
