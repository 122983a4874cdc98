type Handler = (event: string) => void;

export const onEvent: Handler = (event: number) => {
  console.log(event + 1);
};
