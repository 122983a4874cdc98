// Unit tests of the Kody Rules panel: the model (out/violations.js) and the
// tree provider (out/rulesTree.js) against a fake vscode module.
'use strict';
require('./fake-vscode');
const test = require('node:test');
const assert = require('node:assert/strict');
const { buildTree, relativePath, totalViolations, contextValue, showsViolation, detectorDiagnostic } = require('../out/violations');
const { RulesTreeProvider } = require('../out/rulesTree');

const ws = 'file:///home/u/proj';
const rule = (uuid, title, severity) => ({ uuid, title, severity, file: `.kody/rules/${uuid}.md` });
const v = (file, line, character, id, checkedBy = 'detector', extra = {}) => ({
  uri: `${ws}/${file}`,
  range: { start: { line, character }, end: { line, character: character + 3 } },
  match: `m${line}`,
  version: 1,
  checkedBy,
  id,
  ...extra,
});

const result = {
  groups: [
    { rule: rule('low1', 'Prefer short names', 'low'), violations: [v('a.go', 1, 0, 'l1')] },
    {
      rule: rule('crit', 'No secrets', 'critical'),
      violations: [v('z/b.go', 9, 2, 'c1'), v('a.go', 30, 0, 'c2'), v('a.go', 4, 7, 'c3', 'model', { message: 'a key' })],
    },
    { rule: rule('high2', 'B handle errors', 'high'), violations: [v('c.go', 0, 0, 'h1')] },
    { rule: rule('high1', 'A wrap errors', 'high'), violations: [v('c.go', 0, 0, 'h2'), v('d.go', 2, 0, 'h3')] },
    { rule: rule('high0', 'A log errors', 'high'), violations: [v('e.go', 0, 0, 'h4')] },
    { rule: rule('empty', 'Nothing', 'critical'), violations: null },
  ],
  ruleErrors: [{ file: '.kody/rules/bad.md', line: 3, message: 'front matter: yaml: bad' }],
  notChecked: [rule('nc2', 'Zeta', 'low'), rule('nc1', 'Alpha', 'critical')],
};

test('rules sorted by severity, then count, then title; empty groups dropped', () => {
  const rules = buildTree(result, [ws]).filter((n) => n.kind === 'rule');
  assert.deepEqual(
    rules.map((n) => n.label),
    ['No secrets', 'A wrap errors', 'A log errors', 'B handle errors', 'Prefer short names'],
  );
});

test('grouping rule → file → violation with counts', () => {
  const [crit] = buildTree(result, [ws]);
  assert.equal(crit.count, 3);
  assert.equal(crit.description, '3 violations in 2 files');
  assert.deepEqual(
    crit.children.map((f) => [f.label, f.count, f.description]),
    [
      ['a.go', 2, '2'],
      ['z/b.go', 1, '1'],
    ],
  );
  const a = crit.children[0];
  assert.deepEqual(
    a.children.map((n) => n.label),
    ['5:8 m4', '31:1 m30'],
  );
  assert.equal(a.children[0].violation.id, 'c3');
  assert.equal(contextValue(a.children[0]), 'violation.model');
  assert.equal(contextValue(a.children[1]), 'violation.detector');
  const fixable = { ...a.children[1], violation: { ...a.children[1].violation, fixable: true } };
  assert.equal(contextValue(fixable), 'violation.detector.fixable');
  assert.match(a.children[0].tooltip, /a key/);
  const low = buildTree(result, [ws]).find((n) => n.rule && n.rule.uuid === 'low1');
  assert.equal(low.description, '1 violation in 1 file');
  assert.equal(totalViolations(buildTree(result, [ws])), 8);
});

test('broken rule files and rules not checked offline follow the rules', () => {
  const nodes = buildTree(result, [ws]);
  const [errors, notChecked] = nodes.slice(-2);
  assert.equal(errors.kind, 'ruleErrors');
  assert.equal(errors.children[0].label, '.kody/rules/bad.md:3');
  assert.equal(notChecked.kind, 'notCheckedGroup');
  assert.equal(notChecked.description, '2 rules');
  assert.deepEqual(
    notChecked.children.map((n) => [n.label, n.kind, contextValue(n)]),
    [
      ['Alpha', 'notChecked', 'notChecked'],
      ['Zeta', 'notChecked', 'notChecked'],
    ],
  );
});

test('empty and missing results', () => {
  assert.deepEqual(buildTree(null), []);
  assert.deepEqual(buildTree({ groups: null, ruleErrors: null, notChecked: null }), []);
  assert.deepEqual(buildTree({ groups: [], ruleErrors: [] }), []);
});

test('relativePath picks the innermost workspace folder and decodes', () => {
  assert.equal(relativePath('file:///w/a/b%20c.go', ['file:///w', 'file:///w/a']), 'b c.go');
  assert.equal(relativePath('file:///elsewhere/x.go', ['file:///w']), '/elsewhere/x.go');
});

test('tree provider: items, icons, commands and parents', () => {
  const p = new RulesTreeProvider();
  let fired = 0;
  p.onDidChangeTreeData(() => fired++);
  p.update(result, [ws]);
  assert.equal(fired, 1);
  assert.equal(p.total, 8);
  const roots = p.getChildren();
  const crit = p.getTreeItem(roots[0]);
  assert.equal(crit.label, 'No secrets');
  assert.equal(crit.collapsibleState, 2);
  assert.equal(crit.iconPath.id, 'error');
  assert.equal(crit.contextValue, 'rule');
  const file = p.getChildren(roots[0])[0];
  assert.equal(p.getParent(file), roots[0]);
  const fileItem = p.getTreeItem(file);
  assert.equal(fileItem.collapsibleState, 1);
  assert.equal(fileItem.resourceUri.toString(), `${ws}/a.go`);
  const viol = p.getChildren(file)[0];
  const vItem = p.getTreeItem(viol);
  assert.equal(vItem.collapsibleState, 0);
  assert.equal(vItem.command.command, 'vscode.open');
  assert.equal(vItem.command.arguments[0].toString(), `${ws}/a.go`);
  assert.deepEqual(vItem.command.arguments[1].selection.start, { line: 4, character: 7 });
  assert.equal(vItem.contextValue, 'violation.model');
  const nc = roots[roots.length - 1];
  const ncItem = p.getTreeItem(nc);
  assert.equal(ncItem.iconPath.color.id, 'disabledForeground');
  const ncRule = p.getTreeItem(nc.children[0]);
  assert.equal(ncRule.iconPath.color.id, 'disabledForeground');
  assert.equal(ncRule.command.command, 'kodyls.panel.showRule');
  const high = p.getTreeItem(roots.find((n) => n.severity === 'high'));
  assert.equal(high.iconPath.id, 'warning');
  p.update(null, []);
  assert.equal(p.getChildren().length, 0);
  assert.equal(fired, 2);
});

test("a detector's diagnostic of another version than the panel's is not its violation", () => {
  // The id names a place: after a line added above, the violation below
  // has the id the one above had.
  const panel = v('a.go', 4, 1, 'r:a.go:5:1', 'detector', { version: 3 });
  assert.ok(showsViolation(panel, { id: 'r:a.go:5:1', rule: 'r', version: 3 }));
  assert.ok(!showsViolation(panel, { id: 'r:a.go:5:1', rule: 'r', version: 4 }));
  assert.ok(!showsViolation(panel, { id: 'r:a.go:5:1', rule: 'r' }));
  assert.ok(!showsViolation(panel, undefined));
  // A review finding's id does not depend on its place.
  const model = v('a.go', 4, 1, 'f1', 'model', { version: 3 });
  assert.ok(showsViolation(model, { id: 'f1', kind: 'review', rule: 'r' }));
  // Sent instead, the panel's own violation carries its version.
  assert.deepEqual(detectorDiagnostic(rule('r', 'Log', 'high'), panel).data, { id: 'r:a.go:5:1', rule: 'r', version: 3 });
});

// Every id in the tree, depth first.
const allIDs = (nodes) => nodes.flatMap((n) => [n.id, ...allIDs(n.children)]);

test('multi-root: the same rule and ids in two folders give distinct nodes, one rule node per folder', () => {
  const a = 'file:///home/u/a';
  const b = 'file:///home/u/b';
  // The detector's id is folder-relative: the same in both folders.
  const at = (root, file) => ({
    uri: `${root}/${file}`,
    range: { start: { line: 2, character: 8 }, end: { line: 2, character: 20 } },
    match: 'fmt.Println(',
    version: 1,
    checkedBy: 'detector',
    id: 'println:main.go:3:9',
  });
  const r = rule('println', 'No fmt.Println', 'high');
  const res = {
    groups: [{ rule: r, violations: [at(a, 'main.go'), at(b, 'main.go')] }],
    ruleErrors: [
      { file: '.kody/rules/bad.md', line: 1, message: 'front matter: missing ---' },
      { file: '.kody/rules/bad.md', line: 1, message: 'front matter: missing ---' },
    ],
    notChecked: [r, r],
  };
  const nodes = buildTree(res, [a, b]);
  const ids = allIDs(nodes);
  assert.equal(new Set(ids).size, ids.length, `duplicate ids: ${ids.join(', ')}`);
  const rules = nodes.filter((n) => n.kind === 'rule');
  assert.deepEqual(
    rules.map((n) => [n.label, n.description, n.children.map((f) => f.uri)]),
    [
      ['No fmt.Println', '1 violation in 1 file · a', [`${a}/main.go`]],
      ['No fmt.Println', '1 violation in 1 file · b', [`${b}/main.go`]],
    ],
  );
  assert.equal(totalViolations(nodes), 2);
  assert.equal(nodes.find((n) => n.kind === 'ruleErrors').children.length, 2);
  // Through the tree provider too: VS Code registers every item's id.
  const p = new RulesTreeProvider();
  p.update(res, [a, b]);
  const items = [];
  const walk = (n) => {
    items.push(p.getTreeItem(n).id);
    p.getChildren(n).forEach(walk);
  };
  p.getChildren().forEach(walk);
  assert.equal(new Set(items).size, items.length, `duplicate item ids: ${items.join(', ')}`);
});

test('one folder: a violation id includes its uri, rule ids stay by uuid', () => {
  const nodes = buildTree(result, [ws]);
  const crit = nodes[0];
  assert.equal(crit.id, 'rule:crit');
  assert.equal(crit.description, '3 violations in 2 files');
  assert.equal(crit.children[0].children[0].id, `violation:crit:${ws}/a.go:c3`);
});

test('rules of one uuid in two workspace folders are two nodes, with distinct ids', () => {
  const other = 'file:///home/u/other';
  const inFolder = (dir, title) => ({ ...rule('path:.kody/rules/style.md', title, 'high'), file: '.kody/rules/style.md', uri: `${dir}/.kody/rules/style.md` });
  const nodes = buildTree({
    groups: [
      { rule: inFolder(ws, 'A style'), violations: [v('a.go', 1, 0, 'path:.kody/rules/style.md:a.go:2:0')] },
      { rule: inFolder(other, 'B style'), violations: [{ ...v('a.go', 1, 0, 'path:.kody/rules/style.md:a.go:2:0'), uri: `${other}/a.go` }] },
    ],
    ruleErrors: [
      { file: '.kody/rules/bad.md', uri: `${ws}/.kody/rules/bad.md`, line: 1, message: 'bad' },
      { file: '.kody/rules/bad.md', uri: `${other}/.kody/rules/bad.md`, line: 1, message: 'bad' },
    ],
    notChecked: [inFolder(ws, 'A style'), inFolder(other, 'B style')],
  }, [ws, other]);
  const ids = [];
  const walk = (n) => {
    ids.push(n.id);
    n.children.forEach(walk);
  };
  nodes.forEach(walk);
  assert.equal(new Set(ids).size, ids.length, `duplicate ids: ${ids}`);
  assert.deepEqual(nodes.filter((n) => n.kind === 'rule').map((n) => n.label).sort(), ['A style', 'B style']);
});
