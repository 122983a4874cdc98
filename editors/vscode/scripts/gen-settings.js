#!/usr/bin/env node
// Generates package.json's contributes.configuration (every server setting,
// as `kodyls.<key>`, with the contract's type, default, enum, bounds and
// description) and the server commands of contributes.commands from the
// published contract, editors/shared/kodyls-api.json.
//
//   node scripts/gen-settings.js          rewrite package.json
//   node scripts/gen-settings.js --check  exit 1 when package.json is stale
//
// editors/contract's TestVSCodeSettingsMatchContract checks the result in CI.
'use strict';

const fs = require('fs');
const path = require('path');

const root = path.join(__dirname, '..');
const contractFile = path.join(root, '..', 'shared', 'kodyls-api.json');
const packageFile = path.join(root, 'package.json');

// Settings of the extension itself, never sent to the server. Keep in sync
// with README.md ("Settings") and editors/contract/vscode_test.go.
const extensionSettings = {
  'kodyls.path': {
    type: 'string',
    default: 'kodyls',
    markdownDescription:
      'The kodyls executable: a path, or a name looked up on `PATH`. The extension runs `<path> serve`. Install it with `go install github.com/kodustech/kodyls/cmd/kodyls@latest`.',
    scope: 'machine-overridable',
  },
  'kodyls.trace.server': {
    type: 'string',
    default: 'off',
    enum: ['off', 'messages', 'verbose'],
    markdownDescription: 'Trace the Language Server Protocol messages between VS Code and kodyls in the "Kody" output channel.',
    scope: 'window',
  },
};

// Commands of the extension itself (the server's commands come from the contract).
const extensionCommands = [
  { command: 'kodyls.showMenu', title: 'Kody: Show Menu' },
  { command: 'kodyls.showOutput', title: 'Kody: Show Server Output' },
  { command: 'kodyls.doctor', title: 'Kody: Run Doctor' },
  { command: 'kodyls.restart', title: 'Kody: Restart Server' },
  { command: 'kodyls.refreshRuleViolations', title: 'Refresh', icon: '$(refresh)' },
  { command: 'kodyls.panel.showRule', title: 'Show Rule' },
  { command: 'kodyls.panel.applyFix', title: 'Apply Fix' },
  { command: 'kodyls.panel.dismiss', title: 'Dismiss' },
];

const titles = { '': 'Kody (kodyls)', llm: 'Kody: LLM endpoint', review: 'Kody: AI review', rules: 'Kody: Rules', build: 'Kody: Build on save' };

/** The dotted keys of the contract's settings schema, with their schemas, in contract order. */
function contractSettings(api) {
  const out = [];
  for (const [name, schema] of Object.entries(api.settings.properties)) {
    // A group (llm, review, …) is an object without a default; a setting
    // of object type (severity, llm.models) has one.
    if (schema.type === 'object' && !('default' in schema)) {
      for (const [sub, s] of Object.entries(schema.properties)) {
        out.push({ key: `${name}.${sub}`, group: name, schema: s });
      }
    } else {
      out.push({ key: name, group: '', schema });
    }
  }
  return out;
}

/** The VS Code configuration property of one contract setting. */
function toProperty(schema, order) {
  const p = { type: schema.type, default: schema.default };
  for (const k of ['enum', 'minimum', 'maximum', 'properties', 'examples']) {
    if (k in schema) p[k] = schema[k];
  }
  if (schema.additionalProperties === false) p.additionalProperties = false;
  if (schema.description !== undefined) {
    p.description = schema.description;
    p.markdownDescription = schema.description;
  }
  p.order = order;
  return p;
}

/** contributes.configuration: one category per settings group. */
function configuration(api) {
  const cats = new Map();
  const cat = (group) => {
    if (!cats.has(group)) {
      cats.set(group, { id: group ? `kodyls.${group}` : 'kodyls', title: titles[group] || `Kody: ${group}`, properties: {} });
    }
    return cats.get(group).properties;
  };
  let order = 0;
  for (const [key, p] of Object.entries(extensionSettings)) {
    cat('')[key] = { ...p, order: order++ };
  }
  for (const s of contractSettings(api)) {
    cat(s.group)[`kodyls.${s.key}`] = toProperty(s.schema, order++);
  }
  return [...cats.values()];
}

/** contributes.commands: the server's commands with the contract's titles, then the extension's. */
function commands(api) {
  return [
    ...api.commands.map((c) => ({ command: c.name, title: c.title })),
    ...extensionCommands,
  ];
}

/** package.json with the generated parts replaced. */
function generate(pkg, api) {
  const out = { ...pkg, contributes: { ...pkg.contributes } };
  out.contributes.configuration = configuration(api);
  out.contributes.commands = commands(api);
  return out;
}

function main() {
  const api = JSON.parse(fs.readFileSync(contractFile, 'utf8'));
  const current = fs.readFileSync(packageFile, 'utf8');
  const next = JSON.stringify(generate(JSON.parse(current), api), null, 2) + '\n';
  if (process.argv.includes('--check')) {
    if (current !== next) {
      console.error('package.json is stale: run npm run gen:settings');
      process.exit(1);
    }
    return;
  }
  if (current !== next) fs.writeFileSync(packageFile, next);
}

module.exports = { contractSettings, toProperty, configuration, commands, generate, extensionSettings, extensionCommands, contractFile, packageFile };

if (require.main === module) main();
