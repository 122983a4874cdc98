// The kodyls VS Code extension: starts `kodyls serve`, sends the settings,
// and adds the Kody Rules panel, "Explain this error" in a side panel, the
// status bar item and the palette commands.
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  Diagnostic as LspDiagnostic,
  ExecuteCommandParams,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  LSPErrorCodes,
  ResponseError,
  ServerOptions,
  State,
  TransportKind,
  WorkDoneProgress,
  WorkDoneProgressReport,
  WorkspaceEdit as LspWorkspaceEdit,
} from 'vscode-languageclient/node';
import { RulesTreeProvider } from './rulesTree';
import { serverSettingKeys, serverSettings } from './settings';
import { serverCommands, StandInCommands } from './standIns';
import { Status, statusView } from './status';
import { DiagnosticData, detectorDiagnostic, Node, RuleRef, RuleViolationsResult, showsViolation } from './violations';

const installURL = 'https://github.com/kodustech/kodyls#install';
const installCommand = 'go install github.com/kodustech/kodyls/cmd/kodyls@latest';
const explainScheme = 'kodyls-explain';

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let tree: RulesTreeProvider;
let treeView: vscode.TreeView<Node>;
let statusItem: vscode.StatusBarItem;
let lastViolations: RuleViolationsResult | undefined;
let settingKeys: string[] = [];
let standIns: StandInCommands | undefined;
/** kodyls.path as configured, while the executable it names is missing. */
let missing: string | undefined;
/** A start is looking for the executable or waiting for the server. */
let starting = false;
const explanations = new Map<string, string>();
const explainChanged = new vscode.EventEmitter<vscode.Uri>();
let explainSeq = 0;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('Kody');
  settingKeys = serverSettingKeys(context.extension.packageJSON?.contributes?.configuration);
  tree = new RulesTreeProvider();
  treeView = vscode.window.createTreeView('kodyls.rules', { treeDataProvider: tree, showCollapseAll: true });
  statusItem = vscode.window.createStatusBarItem('kodyls.status', vscode.StatusBarAlignment.Left, 10);
  statusItem.name = 'Kody';
  statusItem.command = 'kodyls.showMenu';
  showStatus(undefined);
  statusItem.show();

  // The extension's own commands; the server's (the other contributed
  // ones) come from languageclient while the server runs, and from the
  // stand-ins, which say that kodyls is not running, otherwise.
  const own: Record<string, (...args: never[]) => unknown> = {
    'kodyls.showMenu': showMenu,
    'kodyls.showOutput': () => output.show(true),
    'kodyls.doctor': runDoctor,
    'kodyls.restart': () => restart(context),
    'kodyls.refreshRuleViolations': () => (running() ? refreshViolations() : undefined),
    'kodyls.panel.showRule': (n?: Node) => n?.rule && showRule(n.rule),
    'kodyls.panel.applyFix': (n?: Node) => n && applyFix(n),
    'kodyls.panel.dismiss': (n?: Node) => n && dismiss(n),
    'kodyls.panel.openRuleError': (n?: Node) => n && openRuleError(n),
  };
  standIns = new StandInCommands(serverCommands(context.extension.packageJSON?.contributes?.commands, Object.keys(own)), () => notRunning());
  standIns.enable();

  context.subscriptions.push(
    output,
    treeView,
    statusItem,
    explainChanged,
    standIns,
    vscode.workspace.registerTextDocumentContentProvider(explainScheme, {
      onDidChange: explainChanged.event,
      provideTextDocumentContent: (uri) => explanations.get(uri.toString()) ?? '',
    }),
    ...Object.entries(own).map(([id, run]) => vscode.commands.registerCommand(id, run)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('kodyls.path')) {
        output.appendLine('kodyls.path changed: restarting');
        void restart(context);
      }
    }),
    { dispose: () => void client?.stop() },
  );
  // Resolves once the server runs, or at once when it cannot start: a
  // notification about a missing kodyls is shown, not waited for.
  await start();
}

export async function deactivate(): Promise<void> {
  const c = client;
  client = undefined;
  // A server that never started cannot be stopped; there is nothing to end.
  if (c?.needsStop()) await c.stop();
}

/** The kodyls executable: kodyls.path, resolved on PATH; undefined when missing. */
function findServer(): { configured: string; resolved?: string } {
  const configured = (vscode.workspace.getConfiguration('kodyls').get<string>('path') || 'kodyls').trim();
  const expanded = configured.replace(/^~(?=$|[\\/])/, process.env.HOME ?? '~');
  const isFile = (p: string) => {
    try {
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (expanded.includes('/') || expanded.includes('\\')) {
    const abs = path.isAbsolute(expanded) ? expanded : path.resolve(vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '', expanded);
    return { configured, resolved: isFile(abs) ? abs : undefined };
  }
  const exts = process.platform === 'win32' ? (process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').concat(['']) : [''];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    for (const ext of exts) {
      const p = path.join(dir, expanded + ext);
      if (dir && isFile(p)) return { configured, resolved: p };
    }
  }
  return { configured };
}

/**
 * findServer, retried for a moment when the executable is missing: at
 * start-up a remote window (code-server, Remote-SSH) may deliver the user's
 * settings after the extension activated, and reporting kodyls missing
 * because kodyls.path still read its default would send the user looking
 * for a problem they do not have.
 */
async function findServerSettled(): Promise<{ configured: string; resolved?: string }> {
  let server = findServer();
  for (let i = 0; !server.resolved && i < settleTries; i++) {
    await new Promise((r) => setTimeout(r, settleDelayMs));
    server = findServer();
  }
  return server;
}

let startSeq = 0;
const settleTries = 12;
const settleDelayMs = 250;

/**
 * Says that kodyls (kodyls.path: configured) was not found, with the
 * actions that help. Not awaited by its callers: activation, a restart and
 * the commands must not wait until the user answers.
 */
function showMissing(configured: string): void {
  void vscode.window
    .showErrorMessage(
      `Kody: the kodyls language server was not found ("${configured}"). Install it with \`${installCommand}\` or set kodyls.path.`,
      'How to install',
      'Copy install command',
      'Open Settings',
    )
    .then(async (pick) => {
      if (pick === 'How to install') void vscode.env.openExternal(vscode.Uri.parse(installURL));
      else if (pick === 'Copy install command') {
        await vscode.env.clipboard.writeText(installCommand);
        void vscode.window.showInformationMessage(`Copied: ${installCommand}`);
      } else if (pick === 'Open Settings') {
        // In a remote window (code-server, Remote-SSH) VS Code applies a
        // machine-overridable setting from the remote settings, not the user's.
        if (vscode.env.remoteName) void vscode.commands.executeCommand('workbench.action.openRemoteSettings');
        else void vscode.commands.executeCommand('workbench.action.openSettings', 'kodyls.path');
      }
    });
}

/**
 * The answer of a command that needs the server while it does not run:
 * why (kodyls missing, still starting, stopped) and what helps. Returns at
 * once; the message is not waited for.
 */
function notRunning(): void {
  if (missing !== undefined) {
    showMissing(missing);
  } else if (starting) {
    void vscode.window.showInformationMessage('Kody: kodyls is starting; try again in a moment.');
  } else {
    void vscode.window.showWarningMessage('Kody: the kodyls server is not running.', 'Show Output', 'Restart Server').then((p) => {
      if (p === 'Show Output') output.show();
      else if (p === 'Restart Server') void vscode.commands.executeCommand('kodyls.restart');
    });
  }
}

async function start(): Promise<void> {
  const seq = ++startSeq;
  starting = true;
  missing = undefined;
  try {
    await startClient(seq);
  } finally {
    if (seq === startSeq) starting = false;
  }
}

async function startClient(seq: number): Promise<void> {
  const server = await findServerSettled();
  if (seq !== startSeq) return; // a restart while waiting superseded this start
  if (!server.resolved) {
    const where = vscode.workspace.getConfiguration('kodyls').inspect<string>('path');
    output.appendLine(`kodyls not found: kodyls.path is "${server.configured}" (user ${JSON.stringify(where?.globalValue)}, workspace ${JSON.stringify(where?.workspaceValue)}); PATH=${process.env.PATH ?? ''}`);
    showStatus(undefined, `kodyls not found ("${server.configured}")`);
    missing = server.configured;
    showMissing(server.configured);
    return;
  }
  const serverOptions: ServerOptions = {
    command: server.resolved,
    args: ['serve'],
    transport: TransportKind.stdio,
    options: { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }],
    outputChannel: output,
    initializationOptions: () => ({ kodyls: currentSettings() }),
    synchronize: { configurationSection: 'kodyls' },
    middleware: {
      workspace: {
        // Answer section kodyls with the user's server settings only: not
        // kodyls.path or kodyls.trace, which the server would report as
        // unknown, nor defaults, which would hide KODYLS_LLM_* variables.
        configuration: async (params, token, next) => {
          const answers = await next(params, token);
          if (!Array.isArray(answers)) return answers;
          return params.items.map((item, i) => (item.section === 'kodyls' ? currentSettings(item.scopeUri) : answers[i]));
        },
      },
      executeCommand: (command, args, next) => paletteCommand(command, args, next),
    },
  };
  output.appendLine(`starting ${server.resolved} serve`);
  const c = new LanguageClient('kodyls', 'Kody (kodyls)', serverOptions, clientOptions);
  // The extension shows command results itself (the explanation panel):
  // declared so that the server does not also open each explanation as a
  // document, as it does for generic clients (contract ClientExperimental).
  c.registerFeature({
    fillClientCapabilities(caps) {
      caps.experimental = { ...((caps.experimental as object | undefined) ?? {}), kodyls: { commandResults: true } };
    },
    initialize() {},
    getState() {
      return { kind: 'static' };
    },
    clear() {},
  });
  client = c;
  c.onDidChangeState((e) => {
    if (client !== c) return; // a restart replaced it
    if (e.newState === State.Stopped) {
      showStatus(undefined, 'kodyls stopped');
      standIns?.enable();
    }
  });
  // languageclient registers the server's commands when the server answers
  // initialize: the stand-ins leave just before, not when the start begins,
  // so that a command run meanwhile says that kodyls is starting.
  const commandsFeature = c.getFeature(ExecuteCommandRequest.method);
  const register = commandsFeature.register.bind(commandsFeature);
  commandsFeature.register = (data) => {
    standIns?.disable();
    register(data);
  };
  c.onNotification('kodyls/status', (s: Status) => showStatus(s));
  let timer: NodeJS.Timeout | undefined;
  c.onNotification('kodyls/ruleViolationsChanged', () => {
    // Coalesce a burst (one notification per checked document).
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void refreshViolations(), 100);
  });
  try {
    await c.start();
  } catch (err) {
    if (client === c) standIns?.enable();
    output.appendLine(`kodyls failed to start: ${String(err)}`);
    showStatus(undefined, 'kodyls failed to start: see the output');
    void vscode.window.showErrorMessage(`Kody: kodyls failed to start: ${String(err)}`, 'Show Output').then((p) => p && output.show());
    return;
  }
  await refreshViolations();
}

async function restart(context: vscode.ExtensionContext): Promise<void> {
  void context;
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop();
    } catch (err) {
      output.appendLine(`stopping kodyls: ${String(err)}`);
    }
  }
  standIns?.enable();
  await start();
}

/** The user's server settings for a resource (see settings.ts). */
function currentSettings(scopeUri?: string): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration('kodyls', scopeUri ? vscode.Uri.parse(scopeUri) : undefined);
  return serverSettings(settingKeys, (k) => cfg.inspect(k));
}

function showStatus(s: Status | undefined, problem?: string): void {
  const v = statusView(s);
  statusItem.text = problem ? '$(error) Kody' : v.text;
  statusItem.tooltip = problem ?? v.tooltip;
  const alert = problem ? 'error' : v.alert;
  statusItem.backgroundColor = alert ? new vscode.ThemeColor(`statusBarItem.${alert}Background`) : undefined;
}

function running(): LanguageClient | undefined {
  if (client?.isRunning()) return client;
  notRunning();
  return undefined;
}

function workspaceFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString());
}

async function refreshViolations(): Promise<void> {
  const c = client;
  if (!c?.isRunning()) return;
  try {
    const result = await c.sendRequest(ExecuteCommandRequest.type, { command: 'kodyls.ruleViolations', arguments: [] });
    lastViolations = result as RuleViolationsResult;
  } catch (err) {
    output.appendLine(`kodyls.ruleViolations: ${String(err)}`);
    return;
  }
  tree.update(lastViolations, workspaceFolders());
  const total = tree.total;
  treeView.badge = total > 0 ? { value: total, tooltip: `${total} Kody Rules violations` } : undefined;
  treeView.message = tree.roots.length === 0 ? 'No Kody Rules violations in the open files.' : undefined;
}

/** Runs a server command with a progress notification fed by the server's $/progress; cancellable. */
async function withServerProgress<T>(title: string, command: string, args: unknown[]): Promise<T | undefined> {
  const c = running();
  if (!c) return undefined;
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    async (progress, token) => {
      const workDoneToken = `kodyls-vscode/${++explainSeq}`;
      const sub = c.onProgress(WorkDoneProgress.type, workDoneToken, (p) => {
        if (p.kind === 'report' && (p as WorkDoneProgressReport).message) progress.report({ message: (p as WorkDoneProgressReport).message });
      });
      try {
        const params: ExecuteCommandParams = { command, arguments: args, workDoneToken };
        return (await c.sendRequest(ExecuteCommandRequest.type, params, token)) as T;
      } catch (err) {
        if (token.isCancellationRequested) return undefined;
        if (err instanceof ResponseError && err.code === LSPErrorCodes.ContentModified) {
          // Superseded by a newer review of the file, which shows its
          // findings when it ends: not a failure.
          void vscode.window.showInformationMessage(`Kody: ${errorMessage(err)}`);
          return undefined;
        }
        void vscode.window.showErrorMessage(`Kody: ${command} failed: ${errorMessage(err)}`);
        return undefined;
      } finally {
        sub.dispose();
      }
    },
  );
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

interface ReviewSummary {
  uri: string;
  findings: number;
  hunks: number;
  cachedHunks: number;
  skipped?: string;
  degraded?: string[] | null;
  offline?: boolean;
}

/**
 * The server's commands as languageclient registers them: from the palette
 * (no arguments) they act on the active editor and report their result;
 * from a code action (arguments given) they run as sent.
 */
export async function paletteCommand(command: string, args: unknown[], next: (command: string, args: unknown[]) => unknown): Promise<unknown> {
  const editor = vscode.window.activeTextEditor;
  switch (command) {
    case 'kodyls.explainError': {
      const arg = args.length > 0 ? args[0] : await explainArgsAtCursor();
      if (!arg) return undefined;
      return explain(arg);
    }
    case 'kodyls.fixError': {
      // The server plans and verifies the fix, then asks the editor to
      // apply it with workspace/applyEdit, which VS Code previews.
      const arg = args.length > 0 ? args[0] : await explainArgsAtCursor();
      if (!arg) return undefined;
      const r = await withServerProgress<FixResult>('Kody: fixing the error', command, [arg]);
      if (r) await reportFix(r);
      return r;
    }
    case 'kodyls.reviewFile': {
      const arg = args[0] ?? (editor ? { uri: editor.document.uri.toString() } : undefined);
      if (!arg) {
        void vscode.window.showWarningMessage('Kody: open a file to review.');
        return undefined;
      }
      if (editor?.document.isDirty && args.length === 0) await editor.document.save();
      const r = await withServerProgress<ReviewSummary>('Kody: reviewing', command, [arg]);
      if (r) void vscode.window.showInformationMessage(`Kody: ${reviewLine(r)}`);
      return r;
    }
    case 'kodyls.reviewWorkspace': {
      const rs = await withServerProgress<ReviewSummary[] | null>('Kody: reviewing the open files', command, args);
      if (rs) {
        const findings = rs.reduce((s, r) => s + (r.findings ?? 0), 0);
        void vscode.window.showInformationMessage(`Kody: reviewed ${rs.length} open file(s): ${findings} finding(s).`);
      }
      return rs;
    }
    case 'kodyls.reloadRules': {
      const r = await withServerProgress<{ rules: number; broken: number }>('Kody: reloading rules', command, args);
      if (r) {
        const msg = `Kody: ${r.rules} rule(s) loaded` + (r.broken ? `, ${r.broken} broken rule file(s): see the Kody Rules panel.` : '.');
        void (r.broken ? vscode.window.showWarningMessage(msg) : vscode.window.showInformationMessage(msg));
      }
      await refreshViolations();
      return r;
    }
    case 'kodyls.ruleViolations':
      if (args.length === 0) {
        await vscode.commands.executeCommand('kodyls.rules.focus');
        await refreshViolations();
        return lastViolations;
      }
      return next(command, args);
    case 'kodyls.showRule':
      if (args.length === 0) {
        const rule = await pickRule();
        return rule ? next(command, [showRuleArgs(rule)]) : undefined;
      }
      return next(command, args);
    case 'kodyls.dismissSuggestion': {
      if (args.length > 0) {
        const r = await next(command, args);
        await refreshViolations();
        return r;
      }
      // Only the AI review's findings can be dismissed: a detector's
      // violation has an id too, which the server does not take.
      const d = editor && diagnosticsAtCursor(editor).find((x) => dataID(x) && isReviewFinding(x));
      if (!editor || !d) {
        void vscode.window.showInformationMessage('Kody: no Kody suggestion at the cursor.');
        return undefined;
      }
      const r = await next(command, [{ id: dataID(d), uri: editor.document.uri.toString() }]);
      await refreshViolations();
      return r;
    }
    default:
      return next(command, args);
  }
}

function reviewLine(r: ReviewSummary): string {
  const name = path.basename(vscode.Uri.parse(r.uri).fsPath);
  if (r.skipped) return `${name} not reviewed: ${r.skipped}`;
  let s = `${name}: ${r.findings} finding(s) in ${r.hunks} changed hunk(s)`;
  if (r.cachedHunks) s += `, ${r.cachedHunks} from the cache`;
  if (r.offline) s += ' (offline: local checks only)';
  if (r.degraded?.length) s += `; degraded: ${r.degraded.join(', ')}`;
  return s;
}

function diagnosticsAtCursor(editor: vscode.TextEditor): vscode.Diagnostic[] {
  const pos = editor.selection.active;
  const all = vscode.languages.getDiagnostics(editor.document.uri);
  const here = all.filter((d) => d.range.contains(pos));
  return here.length > 0 ? here : all.filter((d) => d.range.start.line === pos.line);
}

function dataID(d: vscode.Diagnostic): string | undefined {
  const data = (d as vscode.Diagnostic & { data?: { id?: unknown } }).data;
  return typeof data?.id === 'string' ? data.id : undefined;
}

function isReviewFinding(d: vscode.Diagnostic): boolean {
  return (d as vscode.Diagnostic & { data?: { kind?: unknown } }).data?.kind === 'review';
}

/** kodyls.explainError's arguments for the diagnostic at the cursor, or for the selected text. */
async function explainArgsAtCursor(): Promise<unknown> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('Kody: put the cursor on an error to explain it.');
    return undefined;
  }
  const diags = diagnosticsAtCursor(editor);
  let d = diags[0];
  if (diags.length > 1) {
    const pick = await vscode.window.showQuickPick(
      diags.map((x) => ({ label: x.message.split('\n')[0], description: x.source, d: x })),
      { placeHolder: 'Explain which error?' },
    );
    if (!pick) return undefined;
    d = pick.d;
  }
  if (!d) {
    const text = editor.document.getText(editor.selection);
    if (text.trim()) return { text };
    void vscode.window.showInformationMessage('Kody: no diagnostic at the cursor (select error output to explain it instead).');
    return undefined;
  }
  const code = typeof d.code === 'object' ? d.code?.value : d.code;
  const r = d.range;
  return {
    uri: editor.document.uri.toString(),
    range: { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } },
    message: d.message,
    code: code === undefined ? undefined : String(code),
    source: d.source,
  };
}

/** Runs kodyls.explainError and opens its markdown in a preview beside the editor. */
async function explain(arg: unknown): Promise<unknown> {
  const result = await withServerProgress<{ markdown: string }>('Kody: explaining the error', 'kodyls.explainError', [arg]);
  if (!result?.markdown) return result;
  const message = (arg as { message?: string; text?: string }).message ?? (arg as { text?: string }).text ?? 'error';
  await showMarkdownBeside(`Explain ${message.split('\n')[0]}`, result.markdown);
  return result;
}

/** Opens markdown as a preview beside the editor, titled from title. */
async function showMarkdownBeside(title: string, markdown: string): Promise<void> {
  const name = title.replace(/[^\w .:-]+/g, ' ').trim().slice(0, 48) || 'Kody';
  const uri = vscode.Uri.from({ scheme: explainScheme, path: `/${name} ${++explainSeq}.md` });
  explanations.set(uri.toString(), markdown);
  explainChanged.fire(uri);
  try {
    await vscode.commands.executeCommand('markdown.showPreviewToSide', uri);
  } catch {
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  }
}

async function pickRule(): Promise<RuleRef | undefined> {
  await refreshViolations();
  const rules = [...(lastViolations?.groups ?? []).map((g) => g.rule), ...(lastViolations?.notChecked ?? [])];
  if (rules.length === 0) {
    void vscode.window.showInformationMessage('Kody: no rule to show (rules with violations and rules not checked appear here).');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    rules.map((r) => ({ label: r.title, description: `${r.severity} · ${r.file}`, r })),
    { placeHolder: 'Show which Kody Rule?' },
  );
  return pick?.r;
}

/** The argument of kodyls.showRule: the rule file's URI picks its workspace folder. */
function showRuleArgs(rule: RuleRef): { uuid: string; uri?: string } {
  return rule.uri ? { uuid: rule.uuid, uri: rule.uri } : { uuid: rule.uuid };
}

async function showRule(rule: RuleRef): Promise<void> {
  const c = running();
  if (!c) return;
  try {
    // The server opens the rule with window/showDocument.
    await c.sendRequest(ExecuteCommandRequest.type, { command: 'kodyls.showRule', arguments: [showRuleArgs(rule)] });
  } catch (err) {
    void vscode.window.showErrorMessage(`Kody: cannot show the rule: ${errorMessage(err)}`);
  }
}

/** Requests the code actions at the violation and applies its "Apply Kody fix" quick fix. */
async function applyFix(n: Node): Promise<void> {
  const c = running();
  const v = n.violation;
  if (!c || !v) return;
  const uri = vscode.Uri.parse(v.uri);
  const doc = await vscode.workspace.openTextDocument(uri);
  const range = new vscode.Range(v.range.start.line, v.range.start.character, v.range.end.line, v.range.end.character);
  const all = vscode.languages.getDiagnostics(uri);
  // Without a diagnostic of the panel's version (a detector's id names a
  // place), the server gets the panel's violation, which it follows
  // through the edits made since.
  const mine = all.filter((d) => showsViolation(v, (d as vscode.Diagnostic & { data?: DiagnosticData }).data));
  try {
    let diagnostics: LspDiagnostic[];
    if (mine.length > 0) {
      diagnostics = await c.code2ProtocolConverter.asDiagnostics(mine);
    } else if (v.checkedBy === 'detector' && n.rule) {
      diagnostics = [detectorDiagnostic(n.rule, v)];
    } else {
      diagnostics = await c.code2ProtocolConverter.asDiagnostics(all.filter((d) => d.range.intersection(range)));
    }
    const actions = await c.sendRequest('textDocument/codeAction', {
      textDocument: { uri: doc.uri.toString() },
      range: c.code2ProtocolConverter.asRange(range),
      context: { diagnostics, only: ['quickfix'] },
    });
    type Action = { title: string; kind?: string; edit?: unknown; data?: unknown; command?: { command: string; arguments?: unknown[] } };
    let fix = ((actions as Action[] | null) ?? []).find((a) => a.title?.startsWith('Apply Kody fix'));
    if (!fix) {
      void vscode.window.showInformationMessage('Kody: this violation has no fix.');
      return;
    }
    if (!fix.edit && fix.data !== undefined) fix = (await c.sendRequest('codeAction/resolve', fix)) as Action;
    if (fix.edit) {
      const edit = await c.protocol2CodeConverter.asWorkspaceEdit(fix.edit as LspWorkspaceEdit);
      if (!(await vscode.workspace.applyEdit(edit))) void vscode.window.showWarningMessage('Kody: the fix could not be applied.');
    }
    if (fix.command) await vscode.commands.executeCommand(fix.command.command, ...(fix.command.arguments ?? []));
  } catch (err) {
    void vscode.window.showErrorMessage(`Kody: cannot apply the fix: ${errorMessage(err)}`);
  }
}

async function dismiss(n: Node): Promise<void> {
  const c = running();
  const v = n.violation;
  if (!c || !v) return;
  try {
    await c.sendRequest(ExecuteCommandRequest.type, { command: 'kodyls.dismissSuggestion', arguments: [{ id: v.id, uri: v.uri }] });
  } catch (err) {
    void vscode.window.showErrorMessage(`Kody: cannot dismiss: ${errorMessage(err)}`);
  }
  await refreshViolations();
}

async function openRuleError(n: Node): Promise<void> {
  const e = n.ruleError;
  if (!e) return;
  // The file is relative to its own workspace folder, which uri names.
  const folder = vscode.workspace.workspaceFolders?.[0];
  let uri: vscode.Uri;
  if (e.uri) uri = vscode.Uri.parse(e.uri);
  else if (path.isAbsolute(e.file)) uri = vscode.Uri.file(e.file);
  else if (folder) uri = vscode.Uri.joinPath(folder.uri, e.file);
  else return;
  const line = Math.max(0, e.line - 1);
  await vscode.window.showTextDocument(uri, { selection: new vscode.Range(line, 0, line, 0) });
}

async function showMenu(): Promise<void> {
  const items: (vscode.QuickPickItem & { run: () => unknown })[] = [
    { label: '$(file-code) Review this file', run: () => vscode.commands.executeCommand('kodyls.reviewFile') },
    { label: '$(files) Review open files', run: () => vscode.commands.executeCommand('kodyls.reviewWorkspace') },
    { label: '$(list-tree) Show rule violations', run: () => vscode.commands.executeCommand('kodyls.ruleViolations') },
    { label: '$(output) Show output', run: () => output.show(true) },
    { label: '$(pulse) Run doctor', description: 'kodyls doctor', run: runDoctor },
    { label: '$(debug-restart) Restart server', run: () => vscode.commands.executeCommand('kodyls.restart') },
  ];
  const pick = await vscode.window.showQuickPick(items, { placeHolder: statusItem.tooltip?.toString() });
  if (pick) await pick.run();
}

/** Runs `kodyls doctor` for the first workspace folder and shows its report in the output channel. */
async function runDoctor(): Promise<void> {
  const server = findServer();
  if (!server.resolved) {
    showMissing(server.configured);
    return;
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const args = ['doctor', ...(folder ? ['--workspace', folder] : [])];
  // The doctor reads the environment: pass every setting the editor
  // configures (the endpoint included) as KODYLS_SETTINGS.
  const env = { ...process.env, KODYLS_SETTINGS: JSON.stringify(currentSettings()) };
  output.show(true);
  output.appendLine(`\n$ ${server.resolved} ${args.join(' ')}`);
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Kody: running kodyls doctor' }, () =>
    new Promise<void>((resolve) => {
      execFile(server.resolved!, args, { cwd: folder, env, timeout: 120_000, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
        output.append(stdout);
        output.append(stderr);
        if (err) {
          output.appendLine(`kodyls doctor: ${err.message.split('\n')[0]}`);
          void vscode.window.showWarningMessage('Kody: kodyls doctor found problems: see the output.');
        } else {
          void vscode.window.showInformationMessage('Kody: kodyls doctor found no problem.');
        }
        resolve();
      });
    }),
  );
}

interface FixResult {
  applied: boolean;
  verified: boolean;
  verification: string;
  rounds: number;
  files: string[] | null;
  markdown: string;
  note?: string;
  edits: { file: string; oldText: string; newText: string }[] | null;
}

/** What the fix's verification says, in a few words. */
export function fixCheck(r: Pick<FixResult, 'verified' | 'verification'>): string {
  if (r.verified) return 'the build passes with it';
  switch (r.verification) {
    case 'skipped': return 'not verified (set kodyls.build.onSave)';
    case 'notRun': return 'the build did not run (see the fix summary)';
    default: return 'the build still fails with it';
  }
}

/**
 * Tells the outcome of kodyls.fixError. When the editor did not apply the
 * server's workspace edit (its refactor preview was declined or did not
 * open), the fix is shown beside the editor and applied only when the user
 * says so.
 */
async function reportFix(r: FixResult): Promise<void> {
  const files = (r.files ?? []).join(', ') || 'no file';
  const check = fixCheck(r);
  const edits = r.edits ?? [];
  if (r.applied || edits.length === 0) {
    const msg = `Kody: ${r.applied ? 'applied' : 'found no'} fix${r.applied ? ` to ${files}` : ''} after ${r.rounds} plan version(s); ${check}.${r.note ? ' ' + r.note : ''}`;
    if (r.applied && r.verified) void vscode.window.showInformationMessage(msg);
    else void vscode.window.showWarningMessage(msg);
    return;
  }
  await showMarkdownBeside('Fix', r.markdown);
  // Also reached when the preview's Apply was pressed with the change left
  // unchecked (VS Code lists edits that need confirmation unchecked).
  const pick = await vscode.window.showInformationMessage(
    `Kody: the fix to ${files} was not applied (${check}; ${r.rounds} plan version(s)). Apply it now?`, 'Apply Fix', 'Discard');
  if (pick !== 'Apply Fix') return;
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) return;
  const we = new vscode.WorkspaceEdit();
  for (const e of edits) {
    const uri = vscode.Uri.joinPath(folder.uri, e.file);
    const doc = await vscode.workspace.openTextDocument(uri);
    const text = doc.getText();
    const at = text.indexOf(e.oldText);
    if (at < 0 || text.indexOf(e.oldText, at + 1) >= 0) {
      void vscode.window.showWarningMessage(`Kody: ${e.file} changed since the fix was made; run Fix This Error again.`);
      return;
    }
    we.replace(uri, new vscode.Range(doc.positionAt(at), doc.positionAt(at + e.oldText.length)), e.newText);
  }
  if (!(await vscode.workspace.applyEdit(we))) void vscode.window.showWarningMessage('Kody: the fix could not be applied.');
}
