/**
 * A helper program's Perl file spawned directly (`perl <file> <args>`), spoken to in its line
 * protocol: lines in, `<status> <bytes>\n<output>\n` answers out. Hand-written for the tests of
 * the `.pl` files themselves, without nodelet's helper shell between them and the test.
 */
import { spawn } from 'node:child_process';
import { afterEach } from 'vitest';

/** One answer: the status and the output (the byte count checked against it). */
export interface Answer {
  readonly status: number;
  readonly output: string;
}

/** A running program: `ask` writes lines in one write and resolves with their answers and the stdout chunks they came in. */
export interface LineProgram {
  ask(lines: readonly string[]): Promise<{ answers: Answer[]; chunks: number }>;
  /** Everything the program wrote on stderr so far (warnings would land here). */
  stderr(): string;
}

const programs: (() => void)[] = [];
afterEach(() => {
  for (const end of programs.splice(0)) end();
});

/** Spawns `perl file args…`; it is ended after the test. */
export function lineProgram(file: string, args: readonly string[] = []): LineProgram {
  const child = spawn('/usr/bin/perl', [file, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
  programs.push(() => child.kill());
  let out = Buffer.alloc(0);
  let err = '';
  let chunks = 0;
  let exited: number | null | undefined;
  let waiting: (() => void) | undefined;
  child.on('exit', (code) => {
    exited = code;
    waiting?.();
  });
  child.stdout.on('data', (d: Buffer) => {
    out = Buffer.concat([out, d]);
    chunks++;
    waiting?.();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));

  /** Parses every whole answer at the front of `out`; undefined until `n` are there. */
  const parse = (n: number): Answer[] | undefined => {
    const answers: Answer[] = [];
    let at = 0;
    while (answers.length < n) {
      const nl = out.indexOf(0x0a, at);
      if (nl < 0) return undefined;
      const m = /^(\d+) (\d+)$/.exec(out.subarray(at, nl).toString('latin1'));
      if (!m) throw new Error(`not an answer head: ${JSON.stringify(out.subarray(at, nl).toString('utf8'))}`);
      const end = nl + 1 + Number(m[2]);
      if (out.length < end + 1) return undefined;
      if (out[end] !== 0x0a) throw new Error(`answer of ${m[2]} bytes not followed by a newline`);
      answers.push({ status: Number(m[1]), output: out.subarray(nl + 1, end).toString('utf8') });
      at = end + 1;
    }
    out = out.subarray(at);
    return answers;
  };

  return {
    stderr: () => err,
    ask(lines) {
      chunks = 0;
      child.stdin.write(lines.join(''));
      return new Promise((resolve, reject) => {
        const check = () => {
          try {
            const answers = parse(lines.length);
            if (answers) {
              waiting = undefined;
              resolve({ answers, chunks });
            } else if (exited !== undefined) {
              reject(new Error(`the program exited ${exited}; stderr: ${err}`));
            }
          } catch (e) {
            reject(e as Error);
          }
        };
        waiting = check;
        check();
      });
    },
  };
}

/** Hex of a string's UTF-8 bytes (how both protocols carry an argument). */
export const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');
