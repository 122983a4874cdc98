// Unit tests of the extension's activation without a kodyls binary
// (out/extension.js against a fake vscode module): activation does not wait
// for the "not found" notification, and every contributed command answers
// at once, saying that kodyls is missing, instead of hanging or being
// "not found".
'use strict';
const fake = require('./fake-vscode');
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('path');
const pkg = require('../package.json');

const disposable = () => ({ dispose() {} });
const shown = []; // [kind, message, ...actions]
// A notification the user has not answered: it never settles.
const unanswered = (kind) => (message, ...actions) => {
  shown.push([kind, message, ...actions]);
  return new Promise(() => {});
};
const commands = new Map();
const settings = { path: path.join(__dirname, 'no-such-dir', 'kodyls') };

Object.assign(fake, {
  StatusBarAlignment: { Left: 1, Right: 2 },
  ProgressLocation: { Notification: 15 },
  ViewColumn: { Beside: -2 },
  window: {
    createOutputChannel: () => ({ append() {}, appendLine() {}, show() {}, dispose() {} }),
    createTreeView: () => ({ dispose() {} }),
    createStatusBarItem: () => ({ show() {}, dispose() {} }),
    showErrorMessage: unanswered('error'),
    showWarningMessage: unanswered('warning'),
    showInformationMessage: unanswered('information'),
    showQuickPick: async () => undefined,
    withProgress: (_opts, task) => task({ report() {} }, { isCancellationRequested: false, onCancellationRequested: disposable }),
    activeTextEditor: undefined,
  },
  workspace: {
    workspaceFolders: undefined,
    getConfiguration: () => ({ get: (k) => settings[k], inspect: (k) => ({ key: k, globalValue: settings[k] }) }),
    registerTextDocumentContentProvider: disposable,
    onDidChangeConfiguration: disposable,
  },
  commands: {
    // As VS Code's: one handler per id.
    registerCommand(id, run) {
      if (commands.has(id)) throw new Error(`command '${id}' already exists`);
      commands.set(id, run);
      return { dispose: () => commands.get(id) === run && commands.delete(id) };
    },
    async executeCommand(id, ...args) {
      const run = commands.get(id);
      if (!run) throw new Error(`command '${id}' not found`);
      return run(...args);
    },
  },
  env: { remoteName: undefined, openExternal: async () => true, clipboard: { writeText: async () => {} } },
});
// languageclient extends or reads these at load time; no test uses them.
for (const name of ['CompletionItem', 'CodeLens', 'DocumentLink', 'CodeAction', 'Diagnostic', 'CallHierarchyItem',
  'TypeHierarchyItem', 'SymbolInformation', 'InlayHint', 'CancellationError']) {
  fake[name] = fake[name] ?? class {};
}
const extension = require('../out/extension');

// within rejects when p has not settled after ms.
function within(ms, p, what) {
  let timer;
  return Promise.race([
    p,
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} still waits after ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

const context = { subscriptions: [], extension: { packageJSON: pkg } };
const contributed = pkg.contributes.commands.map((c) => c.command);
const serverCommands = ['kodyls.ruleViolations', 'kodyls.reloadRules', 'kodyls.showRule', 'kodyls.reviewFile',
  'kodyls.reviewWorkspace', 'kodyls.dismissSuggestion', 'kodyls.explainError', 'kodyls.fixError'];

test('activation without kodyls does not wait for the notification', async () => {
  // The start looks for the binary for 3 s (settings may arrive late).
  await within(8000, extension.activate(context), 'activate()');
  assert.ok(shown.some(([kind, msg, ...actions]) => kind === 'error' && /kodyls language server was not found/.test(msg)
    && actions.includes('How to install')), JSON.stringify(shown));
});

test('every contributed command is registered while kodyls is missing', () => {
  for (const id of contributed) assert.ok(commands.has(id), `${id} is not registered`);
  for (const id of serverCommands) assert.ok(contributed.includes(id), `${id} is not contributed`);
});

test("the server's commands say at once that kodyls is missing", async () => {
  for (const id of serverCommands) {
    shown.length = 0;
    await within(1000, fake.commands.executeCommand(id), id);
    assert.ok(shown.some(([kind, msg, ...actions]) => kind === 'error' && /not found/.test(msg) && actions.includes('How to install')),
      `${id}: ${JSON.stringify(shown)}`);
  }
});

test('the panel commands, the doctor and the menu answer at once', async () => {
  const node = { kind: 'violation', rule: { uuid: 'r1' }, violation: { id: 'v1', uri: 'file:///w/a.go' } };
  for (const [id, arg] of [['kodyls.panel.showRule', node], ['kodyls.panel.applyFix', node], ['kodyls.panel.dismiss', node],
    ['kodyls.refreshRuleViolations'], ['kodyls.doctor'], ['kodyls.showMenu'], ['kodyls.showOutput']]) {
    shown.length = 0;
    await within(1000, fake.commands.executeCommand(id, arg), id);
    if (id !== 'kodyls.showMenu' && id !== 'kodyls.showOutput') {
      assert.ok(shown.some(([kind, msg]) => kind === 'error' && /not found/.test(msg)), `${id}: ${JSON.stringify(shown)}`);
    }
  }
});

test("a broken rule file opens in its own workspace folder, which its uri names", async () => {
  const opened = [];
  const folders = fake.workspace.workspaceFolders;
  const show = fake.window.showTextDocument;
  fake.workspace.workspaceFolders = [{ uri: fake.Uri.parse('file:///w/first') }, { uri: fake.Uri.parse('file:///w/second') }];
  fake.window.showTextDocument = async (uri, opts) => opened.push([uri.toString(), opts.selection.start.line]);
  try {
    const ruleError = { file: '.kody/rules/bad.md', uri: 'file:///w/second/.kody/rules/bad.md', line: 3, message: 'bad' };
    await within(1000, fake.commands.executeCommand('kodyls.panel.openRuleError', { kind: 'ruleError', ruleError }), 'openRuleError');
    assert.deepEqual(opened, [['file:///w/second/.kody/rules/bad.md', 2]]);
  } finally {
    fake.workspace.workspaceFolders = folders;
    fake.window.showTextDocument = show;
  }
});

test('Restart Server without kodyls finishes without an answer to the notification', async () => {
  shown.length = 0;
  await within(8000, fake.commands.executeCommand('kodyls.restart'), 'kodyls.restart');
  assert.ok(shown.some(([kind, msg]) => kind === 'error' && /not found/.test(msg)), JSON.stringify(shown));
  // The stand-ins survive the restart: still registered, once.
  for (const id of serverCommands) assert.ok(commands.has(id), `${id} is not registered after the restart`);
});

test("stand-ins give way to the server's commands and come back", () => {
  const { StandInCommands } = require('../out/standIns');
  const s = new StandInCommands(['x.a', 'x.b'], () => 'stand-in');
  s.enable();
  s.enable();
  assert.equal(commands.get('x.a')(), 'stand-in');
  s.disable();
  assert.ok(!commands.has('x.a') && !commands.has('x.b'));
  // languageclient registers the server's x.a; a later enable skips it.
  const server = fake.commands.registerCommand('x.a', () => 'server');
  s.enable();
  assert.equal(commands.get('x.a')(), 'server');
  assert.equal(commands.get('x.b')(), 'stand-in');
  server.dispose();
  s.dispose();
  assert.ok(!commands.has('x.a') && !commands.has('x.b'));
});

test("a fix's verification is told as the server gave it", () => {
  assert.equal(extension.fixCheck({ verified: true, verification: 'passed' }), 'the build passes with it');
  assert.equal(extension.fixCheck({ verified: false, verification: 'failed' }), 'the build still fails with it');
  assert.equal(extension.fixCheck({ verified: false, verification: 'skipped' }), 'not verified (set kodyls.build.onSave)');
  // A build that never ran (no valid edit, or one to the build's own
  // files) did not fail.
  assert.match(extension.fixCheck({ verified: false, verification: 'notRun' }), /did not run/);
});

test('Dismiss Suggestion from the palette sends the review finding at the cursor, never a violation of a detector', async () => {
  const uri = 'file:///w/a.go';
  const at = (line, data) => ({ range: { start: { line, character: 0 }, contains: (p) => p.line === line }, message: 'm', source: 'kody', data });
  const detector = at(2, { id: 'r1:a.go:3:0', rule: 'r1', version: 4 });
  const finding = at(2, { id: 'f1', kind: 'review', rule: 'r2' });
  let diags = [detector, finding];
  fake.languages = { getDiagnostics: () => diags };
  fake.window.activeTextEditor = { document: { uri: { toString: () => uri } }, selection: { active: { line: 2, character: 1 } } };
  const sent = [];
  const next = (command, args) => {
    sent.push([command, args]);
    return { dismissed: 1 };
  };
  try {
    await extension.paletteCommand('kodyls.dismissSuggestion', [], next);
    assert.deepEqual(sent, [['kodyls.dismissSuggestion', [{ id: 'f1', uri }]]]);
    // Only a detector's violation on the line: nothing is sent.
    sent.length = 0;
    shown.length = 0;
    diags = [detector];
    assert.equal(await extension.paletteCommand('kodyls.dismissSuggestion', [], next), undefined);
    assert.deepEqual(sent, []);
    assert.ok(shown.some(([kind, msg]) => kind === 'information' && /no Kody suggestion at the cursor/.test(msg)), JSON.stringify(shown));
  } finally {
    fake.window.activeTextEditor = undefined;
    delete fake.languages;
  }
});
