// The Kody Rules panel: a TreeDataProvider over the model of violations.ts.
import * as vscode from 'vscode';
import { buildTree, contextValue, Node, RuleViolationsResult, totalViolations } from './violations';

const severityIcon: Record<string, [string, string]> = {
  critical: ['error', 'errorForeground'],
  high: ['warning', 'list.warningForeground'],
  medium: ['info', 'editorInfo.foreground'],
  low: ['lightbulb', 'editorHint.foreground'],
  error: ['error', 'errorForeground'],
};

export class RulesTreeProvider implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private nodes: Node[] = [];
  private parents = new Map<Node, Node>();

  /** Replaces the tree with the result of kodyls.ruleViolations. */
  update(result: RuleViolationsResult | null | undefined, folders: readonly string[]): void {
    this.nodes = buildTree(result, folders);
    this.parents.clear();
    const walk = (n: Node) => {
      for (const c of n.children) {
        this.parents.set(c, n);
        walk(c);
      }
    };
    this.nodes.forEach(walk);
    this.changed.fire(undefined);
  }

  get roots(): readonly Node[] {
    return this.nodes;
  }

  get total(): number {
    return totalViolations(this.nodes);
  }

  getChildren(n?: Node): Node[] {
    return n ? n.children : this.nodes;
  }

  getParent(n: Node): Node | undefined {
    return this.parents.get(n);
  }

  getTreeItem(n: Node): vscode.TreeItem {
    const state =
      n.children.length === 0
        ? vscode.TreeItemCollapsibleState.None
        : n.kind === 'rule' || n.kind === 'ruleErrors'
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(n.label, state);
    item.id = n.id;
    item.description = n.description;
    item.tooltip = n.tooltip;
    item.contextValue = contextValue(n);
    switch (n.kind) {
      case 'rule':
      case 'violation':
      case 'ruleErrors':
      case 'ruleError': {
        const [icon, color] = severityIcon[(n.severity ?? '').toLowerCase()] ?? ['circle-outline', 'foreground'];
        item.iconPath = new vscode.ThemeIcon(icon, new vscode.ThemeColor(color));
        break;
      }
      case 'file':
        item.resourceUri = vscode.Uri.parse(n.uri!);
        item.iconPath = vscode.ThemeIcon.File;
        break;
      case 'notCheckedGroup':
      case 'notChecked':
        // Grey: these rules were not checked at all.
        item.iconPath = new vscode.ThemeIcon('circle-outline', new vscode.ThemeColor('disabledForeground'));
        break;
    }
    if (n.kind === 'violation' && n.violation) {
      const r = n.violation.range;
      item.command = {
        command: 'vscode.open',
        title: 'Open',
        arguments: [
          vscode.Uri.parse(n.violation.uri),
          { selection: new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character) },
        ],
      };
    } else if (n.kind === 'ruleError' && n.ruleError) {
      item.command = { command: 'kodyls.panel.openRuleError', title: 'Open', arguments: [n] };
    } else if (n.kind === 'notChecked') {
      item.command = { command: 'kodyls.panel.showRule', title: 'Show Rule', arguments: [n] };
    }
    return item;
  }
}
