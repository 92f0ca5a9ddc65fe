// SIGINT/SIGTERM for `kv-cache` and `kv-cache replay`, in three stages:
//   before the work has started (arguments not yet known good): exit at once with a message; nothing
//     has been created, so there is nothing to save or remove;
//   first signal once started: stop issuing, let the in-flight operations finish or abort, save the
//     partial results (marked interrupted), remove the entry files, exit 130 (SIGINT) / 143 (SIGTERM);
//   a second signal: exit at once, whatever is under way (the user insists).
// The bootstrap (bin/kv-cache.cjs) installs the process's handlers before any module loads and relays
// the signals here once main() listens; before that it exits with the same message.

/** What a signal does to the process; tests substitute a fake. */
export interface SignalHost {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  /** Writes one line for the user (stderr). */
  say(line: string): void;
  /** Ends the process with `code`. */
  exit(code: number): void;
}

export const HANDLED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/** The shell's convention: 128 + the signal's number. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return signal === 'SIGINT' ? 130 : 143;
}

/** Where signals come from: the process itself, or the bootstrap's relay (it listens from the first instant). */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
}

/** The process's stderr and exit, with signals from `source`. */
export function processSignalHost(source: SignalSource = process): SignalHost {
  return {
    on: (s, l) => source.on(s, l),
    off: (s, l) => source.off(s, l),
    say: (line) => void process.stderr.write(`${line}\n`),
    exit: (code) => process.exit(code),
  };
}

export class SignalGuard {
  private readonly controller = new AbortController();
  private first: NodeJS.Signals | undefined;
  private started = false;
  private readonly listener = (signal: NodeJS.Signals): void => this.onSignal(signal);

  /** `prefix` starts every line (e.g. 'kv-cache', 'kv-cache replay'). */
  constructor(
    private readonly prefix: string,
    private readonly host: SignalHost = processSignalHost(),
  ) {}

  /** Installs the handlers; call before any work, so no signal finds the default action (death, no message). */
  install(): this {
    for (const s of HANDLED_SIGNALS) this.host.on(s, this.listener);
    return this;
  }

  uninstall(): void {
    for (const s of HANDLED_SIGNALS) this.host.off(s, this.listener);
  }

  /**
   * The inputs are known good and work that creates files begins: from now on the first signal stops
   * the work through the returned signal instead of exiting.
   */
  begin(): AbortSignal {
    this.started = true;
    return this.controller.signal;
  }

  /** The first signal received after `begin`, if any. */
  get received(): NodeJS.Signals | undefined {
    return this.first;
  }

  /** 130/143 once a signal stopped the work, else 0. */
  get exitCode(): number {
    return this.first === undefined ? 0 : signalExitCode(this.first);
  }

  private onSignal(signal: NodeJS.Signals): void {
    if (!this.started) {
      this.host.say(`${this.prefix}: ${signal} before the work started: exiting; nothing was created or written`);
      this.host.exit(signalExitCode(signal));
      return;
    }
    if (this.first !== undefined) {
      this.host.say(`${this.prefix}: second signal (${signal}): exiting at once; entry files may be left behind`);
      this.host.exit(signalExitCode(signal));
      return;
    }
    this.first = signal;
    this.host.say(`\n${this.prefix}: ${signal}: stopping, saving the results gathered so far… (signal again to exit at once)`);
    this.controller.abort();
  }
}
