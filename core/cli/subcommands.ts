/** `nodelet push` and `nodelet pull`. */
export async function runSubcommand(name: 'push' | 'pull', args: string[]): Promise<number> {
  process.stderr.write(`nodelet ${name}: not implemented yet (args: ${args.join(' ')})\n`);
  return 1;
}
