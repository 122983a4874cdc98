// The Kody Rules panel's model: the result of kodyls.ruleViolations turned
// into a tree of plain nodes (rule → file → violation, rule files that
// failed to load, rules not checked offline). No vscode import, so the
// grouping, counts and order are unit-tested with node --test.

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface RuleRef {
  uuid: string;
  title: string;
  severity: string;
  /** Relative to the rule's workspace folder. */
  file: string;
  /** The rule file (servers before 0.1 leave it out). Two workspace folders may have rules of one uuid. */
  uri?: string;
}

export interface Violation {
  uri: string;
  range: Range;
  match: string;
  version: number;
  checkedBy: string;
  id: string;
  message?: string;
  /** The diagnostic has an "Apply Kody fix" quick fix. */
  fixable?: boolean;
}

export interface ViolationGroup {
  rule: RuleRef;
  violations: Violation[] | null;
}

export interface RuleError {
  /** Relative to its workspace folder. */
  file: string;
  /** The rule file (servers before 0.1 leave it out). */
  uri?: string;
  line: number;
  message: string;
}

/** The result of kodyls.ruleViolations (editors/shared/kodyls-api.json). */
export interface RuleViolationsResult {
  groups: ViolationGroup[] | null;
  ruleErrors: RuleError[] | null;
  notChecked?: RuleRef[] | null;
}

export type NodeKind = 'rule' | 'file' | 'violation' | 'ruleErrors' | 'ruleError' | 'notCheckedGroup' | 'notChecked';

export interface Node {
  kind: NodeKind;
  /** Stable across refreshes, so the tree keeps its expansion state. */
  id: string;
  label: string;
  description?: string;
  tooltip?: string;
  /** critical, high, medium, low, or error for a broken rule file. */
  severity?: string;
  /** Violations under the node (rule and file nodes). */
  count?: number;
  rule?: RuleRef;
  violation?: Violation;
  ruleError?: RuleError;
  /** The document a file or violation node opens. */
  uri?: string;
  children: Node[];
}

export const severityOrder = ['critical', 'high', 'medium', 'low'];

function severityRank(s: string): number {
  const i = severityOrder.indexOf((s || '').toLowerCase());
  return i < 0 ? severityOrder.length : i;
}

function plural(n: number, one: string, many = one + 's'): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The path of uri relative to the workspace folder that contains it (the
 * longest matching folder), else the path of the URI, decoded.
 */
export function relativePath(uri: string, folders: readonly string[]): string {
  let best = '';
  for (const f of folders) {
    const dir = f.endsWith('/') ? f : f + '/';
    if (uri.startsWith(dir) && dir.length > best.length) best = dir;
  }
  const rest = best ? uri.slice(best.length) : uri.replace(/^file:\/\//, '');
  try {
    return decodeURIComponent(rest);
  } catch {
    return rest;
  }
}

function byPosition(a: Violation, b: Violation): number {
  return a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character || a.id.localeCompare(b.id);
}

function oneLine(s: string, max = 80): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? t.slice(0, max - 1) + '…' : t;
}

/** The workspace folder (of folders) that contains uri: the longest, or ''. */
function folderOf(uri: string, folders: readonly string[]): string {
  let best = '';
  for (const f of folders) {
    const dir = f.endsWith('/') ? f : f + '/';
    if (uri.startsWith(dir) && dir.length > best.length) best = f;
  }
  return best;
}

function folderName(folder: string): string {
  const name = folder.replace(/\/+$/, '').split('/').pop() ?? folder;
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** An entry's absolute uri, where the server sends one (multi-root). */
function uriOf(x: object): string | undefined {
  const u = (x as { uri?: unknown }).uri;
  return typeof u === 'string' && u !== '' ? u : undefined;
}

/**
 * The panel's top-level nodes: one per rule with violations (most severe
 * first, then most violations, then by title), its files sorted by path and
 * their violations by position; then the broken rule files; then the rules
 * not checked offline, greyed out by the view. A rule whose violations are
 * in several workspace folders has one node per folder, named after it.
 * Every node's id is unique in the tree (VS Code refuses a tree with two
 * nodes of the same id).
 */
export function buildTree(result: RuleViolationsResult | null | undefined, folders: readonly string[] = []): Node[] {
  const nodes: Node[] = [];
  const seen = new Map<string, number>();
  const unique = (id: string): string => {
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    return n === 1 ? id : `${id}#${n}`;
  };

  // The violations of each rule, per workspace folder.
  interface RuleFolder {
    rule: RuleRef;
    folder: string;
    violations: Violation[];
  }
  const perRule = new Map<string, Map<string, RuleFolder>>();
  for (const g of result?.groups ?? []) {
    for (const v of g.violations ?? []) {
      const folder = folderOf(v.uri, folders);
      let byFolder = perRule.get(g.rule.uuid);
      if (!byFolder) perRule.set(g.rule.uuid, (byFolder = new Map()));
      let rf = byFolder.get(folder);
      if (!rf) byFolder.set(folder, (rf = { rule: g.rule, folder, violations: [] }));
      rf.violations.push(v);
    }
  }
  const rules: Node[] = [];
  for (const [uuid, byFolder] of perRule) {
    const split = byFolder.size > 1;
    for (const { rule, folder, violations } of byFolder.values()) {
      const key = split ? `${uuid}:${folder}` : uuid;
      const byFile = new Map<string, Violation[]>();
      for (const v of violations) {
        const list = byFile.get(v.uri) ?? [];
        list.push(v);
        byFile.set(v.uri, list);
      }
      const files: Node[] = [...byFile.entries()]
        .map(([uri, vs]) => ({ uri, path: relativePath(uri, folders), vs: vs.sort(byPosition) }))
        .sort((a, b) => a.path.localeCompare(b.path))
        .map(({ uri, path, vs }) => ({
          kind: 'file' as const,
          id: `file:${key}:${uri}`,
          label: path,
          description: String(vs.length),
          severity: rule.severity,
          count: vs.length,
          uri,
          rule,
          children: vs.map((v) => violationNode(rule, key, v)),
        }));
      const where = split ? ` · ${folderName(folder) || 'outside the workspace'}` : '';
      rules.push({
        kind: 'rule',
        id: `rule:${key}`,
        label: rule.title,
        description: `${plural(violations.length, 'violation')} in ${plural(files.length, 'file')}${where}`,
        tooltip: `${rule.title}\n${rule.severity} · ${uriOf(rule) ?? rule.file}`,
        severity: rule.severity,
        count: violations.length,
        rule,
        children: files,
      });
    }
  }
  rules.sort(
    (a, b) =>
      severityRank(a.severity!) - severityRank(b.severity!) ||
      b.count! - a.count! ||
      a.label.localeCompare(b.label) ||
      (a.description ?? '').localeCompare(b.description ?? ''),
  );
  const withUniqueIDs = (n: Node): Node => ({ ...n, id: unique(n.id), children: n.children.map(withUniqueIDs) });
  nodes.push(...rules.map(withUniqueIDs));

  const errors = result?.ruleErrors ?? [];
  if (errors.length > 0) {
    nodes.push({
      kind: 'ruleErrors',
      id: unique('ruleErrors'),
      label: 'Broken rule files',
      description: String(errors.length),
      severity: 'error',
      count: errors.length,
      children: [...errors]
        .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || (uriOf(a) ?? '').localeCompare(uriOf(b) ?? ''))
        .map((e) => ({
          kind: 'ruleError' as const,
          // Two folders may have the same broken file: its uri, where
          // sent, tells them apart, else the suffix unique adds.
          id: unique(`ruleError:${uriOf(e) ?? e.file}:${e.line}:${e.message}`),
          label: e.line > 0 ? `${e.file}:${e.line}` : e.file,
          description: oneLine(e.message),
          tooltip: uriOf(e) ? `${uriOf(e)}\n${e.message}` : e.message,
          severity: 'error',
          ruleError: e,
          children: [],
        })),
    });
  }

  const notChecked = result?.notChecked ?? [];
  if (notChecked.length > 0) {
    nodes.push({
      kind: 'notCheckedGroup',
      id: unique('notChecked'),
      label: 'Not checked offline',
      description: plural(notChecked.length, 'rule'),
      tooltip: 'These rules have no local detector and no model is configured: set kodyls.llm.baseUrl to check them.',
      count: notChecked.length,
      children: [...notChecked]
        .sort((a, b) => severityRank(a.severity) - severityRank(b.severity) || a.title.localeCompare(b.title))
        .map((r) => ({
          kind: 'notChecked' as const,
          id: unique(`notChecked:${r.uuid}:${uriOf(r) ?? r.file}`),
          label: r.title,
          description: 'not checked offline',
          tooltip: `${r.title}\n${r.severity} · ${uriOf(r) ?? r.file}\nNo local detector and no model configured.`,
          severity: r.severity,
          rule: r,
          children: [],
        })),
    });
  }
  return nodes;
}

function violationNode(rule: RuleRef, key: string, v: Violation): Node {
  const where = `${v.range.start.line + 1}:${v.range.start.character + 1}`;
  const text = v.message || v.match;
  return {
    kind: 'violation',
    // A detector's id is relative to its workspace folder: the uri tells
    // two folders' violations apart.
    id: `violation:${key}:${v.uri}:${v.id}`,
    label: `${where} ${oneLine(v.match || text)}`,
    description: v.checkedBy === 'model' ? 'model' : undefined,
    tooltip: [rule.title, text, `checked by ${v.checkedBy}`].filter(Boolean).join('\n'),
    severity: rule.severity,
    rule,
    violation: v,
    uri: v.uri,
    children: [],
  };
}

/** The number of violations of the tree, for the view's badge. */
export function totalViolations(nodes: readonly Node[]): number {
  return nodes.filter((n) => n.kind === 'rule').reduce((s, n) => s + (n.count ?? 0), 0);
}

/** The VS Code context value of a node: the context menus match on it. */
export function contextValue(n: Node): string {
  switch (n.kind) {
    case 'violation':
      if (n.violation?.checkedBy === 'model') return 'violation.model';
      // A detector's violation can be fixed when its rule has a replacement.
      return n.violation?.fixable ? 'violation.detector.fixable' : 'violation.detector';
    default:
      return n.kind;
  }
}

/** The data of a diagnostic kodyls published (diagnosticData in editors/shared/kodyls-api.json). */
export interface DiagnosticData {
  id?: unknown;
  rule?: unknown;
  kind?: unknown;
  version?: unknown;
}

/**
 * Whether an editor's diagnostic, by its data, shows the panel's violation
 * v. A detector's id names a place (rule, file, line, column): in another
 * version of the buffer than the panel's, the diagnostic of that id may be
 * another violation, so it must be of the panel's version too.
 */
export function showsViolation(v: Violation, data: DiagnosticData | undefined): boolean {
  if (data?.id !== v.id) return false;
  return v.checkedBy === 'model' || data.version === v.version;
}

/**
 * The diagnostic of a detector's violation as the server published it for
 * the panel's version, sent in the code action request when the editor
 * shows none of that version: the server follows it through the edits made
 * since.
 */
export function detectorDiagnostic(rule: RuleRef, v: Violation) {
  return {
    range: v.range,
    message: rule.title,
    source: 'kody',
    code: rule.uuid,
    data: { id: v.id, rule: rule.uuid, version: v.version },
  };
}
