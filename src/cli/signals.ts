// SIGINT/SIGTERM for every command that creates files (run, trials, replay, mlperf and its ranks,
// trace), in three stages:
//   before the work has started (arguments not yet known good): exit at once with a message; nothing
//     has been created, so there is nothing to save or remove;
//   first signal once started: stop issuing, let the in-flight operations finish or abort, save the
//     partial results (marked interrupted), remove the entry files, exit 130 (SIGINT) / 143 (SIGTERM);
//     the same signal delivered again within REPEAT_WINDOW_MS of it is that same request (launchers
//     deliver one stop twice, below) and changes nothing;
//   any later signal: force-quit (the user insists): the command's force-quit steps run (synchronous,
//     bounded: remove this run's entry files, write partial results already at hand), then exit.
// The bootstrap (bin/kv-cache.cjs) installs the process's handlers before any module loads and relays
// the signals here once main() listens; before that it exits with the same message.
import type { Clock } from '../util/clock.js';
import { monotonicClock } from '../util/clock.js';
import { messageOf } from '../util/errors.js';

/**
 * How long after the first signal a repeat of it is the same stop request. Launchers deliver one stop
 * twice: GNU `timeout` signals the command and then its own process group (the command is in it),
 * `kill -TERM -<pgid>` after a wrapper forwarded the signal, mpirun/srun forwarding on top of a
 * group-wide delivery. Those repeats follow the first within microseconds to a few tens of
 * milliseconds, even on a loaded machine (the handlers run back to back when the event loop was
 * busy). A person who reads "signal again to exit at once" and presses Ctrl-C again takes longer
 * than a second; one who presses within the second is told the press was taken as the same request.
 * Measured from the first signal (not from the latest repeat), so holding a key down cannot extend it.
 */
export const REPEAT_WINDOW_MS = 1000;

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

/**
 * What a command still does when the user forces the exit: synchronous and quick (it runs inside the
 * signal handler, just before the process exits); returns the lines to tell the user.
 */
export type ForceQuitStep = () => readonly string[];

/** The first signal after `begin`, and when it was handled (the guard's clock). */
interface FirstSignal {
  readonly signal: NodeJS.Signals;
  readonly atMs: number;
}

export class SignalGuard {
  private readonly controller = new AbortController();
  private first: FirstSignal | undefined;
  private repeatNoted = false;
  private started = false;
  private readonly steps = new Set<ForceQuitStep>();
  private readonly listener = (signal: NodeJS.Signals): void => this.onSignal(signal);

  /** `prefix` starts every line (e.g. 'kv-cache', 'kv-cache replay'); `clock` times the repeat window. */
  constructor(
    private readonly prefix: string,
    private readonly host: SignalHost = processSignalHost(),
    private readonly clock: Clock = monotonicClock,
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

  /** Adds a step to run if the user forces the exit (in the order added); returns its removal. */
  atForceQuit(step: ForceQuitStep): () => void {
    this.steps.add(step);
    return () => void this.steps.delete(step);
  }

  /** The first signal received after `begin`, if any. */
  get received(): NodeJS.Signals | undefined {
    return this.first?.signal;
  }

  /** 130/143 once a signal stopped the work, else 0. */
  get exitCode(): number {
    return this.first === undefined ? 0 : signalExitCode(this.first.signal);
  }

  private onSignal(signal: NodeJS.Signals): void {
    if (!this.started) {
      this.host.say(`${this.prefix}: ${signal} before the work started: exiting; nothing was created or written`);
      this.host.exit(signalExitCode(signal));
      return;
    }
    const now = this.clock.now();
    if (this.first === undefined) {
      this.first = { signal, atMs: now };
      this.host.say(`\n${this.prefix}: ${signal}: stopping, saving the results gathered so far… (signal again to exit at once)`);
      this.controller.abort();
      return;
    }
    if (signal === this.first.signal && now - this.first.atMs < REPEAT_WINDOW_MS) {
      if (!this.repeatNoted)
        this.host.say(
          `${this.prefix}: ${signal} again within ${REPEAT_WINDOW_MS / 1000} s of the first: the same stop request (a launcher delivering it twice); still saving — signal again to exit at once`,
        );
      this.repeatNoted = true;
      return;
    }
    this.forceQuit(signal);
  }

  /** The user insists: run the force-quit steps (each on its own: one failing does not skip the rest), then exit. */
  private forceQuit(signal: NodeJS.Signals): void {
    this.host.say(`${this.prefix}: signal again (${signal}): exiting at once`);
    for (const step of this.steps) {
      try {
        for (const line of step()) this.host.say(`${this.prefix}: ${line}`);
      } catch (e) {
        this.host.say(`${this.prefix}: while exiting: ${messageOf(e)}`);
      }
    }
    this.host.exit(signalExitCode(signal));
  }
}
