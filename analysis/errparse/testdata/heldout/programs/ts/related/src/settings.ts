interface Settings {
  retries: number;
  verbose: boolean;
}

export const defaults: Settings = {
  retries: "3",
  verbose: false,
};
