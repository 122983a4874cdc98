// The status bar text of a kodyls/status notification: no vscode import.

export interface Status {
  state: 'offline' | 'ready' | 'reviewing' | 'degraded' | 'endpointDown' | string;
  message?: string;
  reviewing: number;
}

export interface StatusView {
  text: string;
  tooltip: string;
  /** error or warning: the status bar item's background. */
  alert?: 'error' | 'warning';
}

const defaults: Record<string, string> = {
  offline: 'No model configured: only the local Kody Rules detectors run. Set kodyls.llm.baseUrl to turn on the AI review.',
  ready: 'The model is configured and no review is running.',
  reviewing: 'Reviewing.',
  degraded: 'The last review lost model stages, to bad answers or to an endpoint that failed.',
  endpointDown: 'The model endpoint does not answer: only local checks run until it does.',
};

/** The states this file has a text for, in the contract's order. */
export const knownStates: readonly string[] = Object.keys(defaults);

export function statusView(s: Status | undefined): StatusView {
  if (!s) return { text: '$(loading~spin) Kody', tooltip: 'Starting kodyls…' };
  const tooltip = s.message || defaults[s.state] || s.state;
  switch (s.state) {
    case 'offline':
      return { text: '$(circle-slash) Kody offline', tooltip };
    case 'ready':
      return { text: '$(check) Kody', tooltip };
    case 'reviewing':
      return { text: `$(sync~spin) Kody reviewing ${s.reviewing}`, tooltip };
    case 'degraded':
      return { text: '$(warning) Kody degraded', tooltip, alert: 'warning' };
    case 'endpointDown':
      return { text: '$(error) Kody endpoint down', tooltip, alert: 'error' };
    default:
      return { text: `Kody ${s.state}`, tooltip };
  }
}
