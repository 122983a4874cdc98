// Unit tests of the contract mapping: package.json's settings and commands
// generated from editors/shared/kodyls-api.json, and what is sent to the server.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const gen = require('../scripts/gen-settings');
const { serverSettings, serverSettingKeys, extensionOnlySettings } = require('../out/settings');
const { statusView } = require('../out/status');

const api = JSON.parse(fs.readFileSync(gen.contractFile, 'utf8'));
const pkg = JSON.parse(fs.readFileSync(gen.packageFile, 'utf8'));

function flatten(configuration) {
  return Object.assign({}, ...configuration.map((c) => c.properties));
}

test('every contract setting becomes kodyls.<key> with its type, default, enum, bounds and description', () => {
  const props = flatten(gen.configuration(api));
  const settings = gen.contractSettings(api);
  assert.ok(settings.length >= 10);
  for (const { key, schema } of settings) {
    const p = props[`kodyls.${key}`];
    assert.ok(p, `kodyls.${key} missing`);
    assert.equal(p.type, schema.type, key);
    assert.deepEqual(p.default, schema.default, key);
    assert.deepEqual(p.enum, schema.enum, key);
    assert.equal(p.minimum, schema.minimum, key);
    assert.equal(p.maximum, schema.maximum, key);
    assert.equal(p.description, schema.description, key);
  }
  const extras = Object.keys(props).filter((k) => !settings.some((s) => `kodyls.${s.key}` === k));
  assert.deepEqual(extras.sort(), extensionOnlySettings.map((k) => `kodyls.${k}`).sort());
  assert.equal(props['kodyls.path'].default, 'kodyls');
});

test('groups are nested one level; object settings keep their properties', () => {
  const keys = gen.contractSettings(api).map((s) => s.key);
  assert.ok(keys.includes('llm.baseUrl') && keys.includes('review.trigger') && keys.includes('baseRef'));
  assert.ok(keys.includes('severity') && keys.includes('llm.models'));
  assert.ok(!keys.includes('llm') && !keys.includes('severity.low'));
  const props = flatten(gen.configuration(api));
  assert.deepEqual(props['kodyls.severity'].properties.low.enum, ['error', 'warning', 'information', 'hint']);
  assert.equal(props['kodyls.severity'].additionalProperties, false);
  for (const cat of gen.configuration(api)) {
    const orders = Object.values(cat.properties).map((p) => p.order);
    assert.deepEqual(orders, [...orders].sort((a, b) => a - b), cat.title);
  }
});

test('every server command is in the palette with the contract title', () => {
  const cmds = gen.commands(api);
  for (const c of api.commands) {
    assert.deepEqual(
      cmds.find((x) => x.command === c.name),
      { command: c.name, title: c.title },
    );
  }
});

test('package.json is current (npm run gen:settings)', () => {
  assert.deepEqual(pkg, gen.generate(pkg, api));
  assert.deepEqual(serverSettingKeys(pkg.contributes.configuration).sort(), gen.contractSettings(api).map((s) => s.key).sort());
});

test('only the settings the user set are sent, nested', () => {
  const set = {
    'llm.baseUrl': { globalValue: 'http://localhost:11434/v1' },
    'review.trigger': { globalValue: 'save', workspaceValue: 'idle' },
    severity: { workspaceFolderValue: { low: 'information' } },
    path: { globalValue: '/usr/bin/kodyls' },
    'llm.model': {},
  };
  const got = serverSettings(['llm.baseUrl', 'llm.model', 'review.trigger', 'severity', 'path', 'baseRef'], (k) => set[k]);
  assert.deepEqual(got, {
    llm: { baseUrl: 'http://localhost:11434/v1' },
    review: { trigger: 'idle' },
    severity: { low: 'information' },
  });
});

test('status bar text of kodyls/status', () => {
  assert.match(statusView({ state: 'reviewing', reviewing: 2 }).text, /reviewing 2/);
  assert.equal(statusView({ state: 'endpointDown', reviewing: 0, message: 'connection refused' }).tooltip, 'connection refused');
  assert.equal(statusView({ state: 'endpointDown', reviewing: 0 }).alert, 'error');
  assert.match(statusView({ state: 'offline', reviewing: 0 }).text, /offline/);
  assert.match(statusView(undefined).tooltip, /Starting/);
});

test('the status bar knows exactly the states of the contract', () => {
  const status = api.notifications.find((n) => n.method === 'kodyls/status');
  const states = status.params.properties.state.enum;
  assert.ok(states.length >= 5);
  const { knownStates } = require('../out/status');
  assert.deepEqual([...knownStates].sort(), [...states].sort());
  for (const state of states) {
    const v = statusView({ state, reviewing: 1 });
    // Not the fallback for a state this file does not know.
    assert.notEqual(v.text, `Kody ${state}`, state);
    assert.match(v.text, /\$\([a-z~-]+\) Kody/, state);
    assert.ok(v.tooltip && v.tooltip !== state, state);
  }
});
