// Stand-ins for the server's commands while no server runs.
import * as vscode from 'vscode';

/**
 * The contributed commands the server provides: every command of
 * package.json's contributes.commands that the extension does not
 * register itself (own).
 */
export function serverCommands(contributed: { command: string }[] | undefined, own: readonly string[]): string[] {
  return (contributed ?? []).map((c) => c.command).filter((id) => !own.includes(id));
}

/**
 * languageclient registers the server's commands when the server starts
 * and drops them when it stops: without a stand-in, a palette entry of a
 * server command answers "command not found" while kodyls is missing,
 * failed to start or stopped. enable() registers a stand-in for each (it
 * calls answer), disable() drops them before languageclient registers the
 * real ones; both may be called again.
 */
export class StandInCommands implements vscode.Disposable {
  private registered: vscode.Disposable[] = [];

  constructor(
    readonly ids: readonly string[],
    private readonly answer: (id: string) => unknown,
  ) {}

  get enabled(): boolean {
    return this.registered.length > 0;
  }

  enable(): void {
    if (this.enabled) return;
    for (const id of this.ids) {
      try {
        this.registered.push(vscode.commands.registerCommand(id, () => this.answer(id)));
      } catch {
        // Registered already: by languageclient, for a server that runs.
      }
    }
  }

  disable(): void {
    for (const d of this.registered) d.dispose();
    this.registered = [];
  }

  dispose(): void {
    this.disable();
  }
}
