// The settings sent to the server: no vscode import, unit-tested.

/** Settings of the extension itself: never sent to the server. */
export const extensionOnlySettings = ['path', 'trace.server'];

/** Where a setting was set, as WorkspaceConfiguration.inspect reports it. */
export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * The server's kodyls section from the keys of package.json's
 * configuration (dotted, without the `kodyls.` prefix): only the values the
 * user set, nested by their dots ({"llm": {"baseUrl": …}}), so that the
 * server's defaults and its environment (KODYLS_LLM_BASE_URL, …) still
 * apply to everything else.
 */
export function serverSettings(keys: readonly string[], inspect: (key: string) => Inspected | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    if (extensionOnlySettings.includes(key)) continue;
    const i = inspect(key);
    const value = i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
    if (value === undefined) continue;
    const parts = key.split('.');
    let obj = out;
    for (const p of parts.slice(0, -1)) {
      if (typeof obj[p] !== 'object' || obj[p] === null) obj[p] = {};
      obj = obj[p] as Record<string, unknown>;
    }
    obj[parts[parts.length - 1]] = value;
  }
  return out;
}

/** The server setting keys among package.json's configuration properties. */
export function serverSettingKeys(configuration: unknown): string[] {
  const cats = Array.isArray(configuration) ? configuration : [configuration];
  const keys: string[] = [];
  for (const c of cats) {
    for (const k of Object.keys((c as { properties?: object })?.properties ?? {})) {
      if (!k.startsWith('kodyls.')) continue;
      const key = k.slice('kodyls.'.length);
      if (!extensionOnlySettings.includes(key)) keys.push(key);
    }
  }
  return keys;
}
