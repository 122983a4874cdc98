import { Badge } from "./Badge";

export function App({ unread }: { unread: string }) {
  return (
    <div>
      <Badge label="Inbox" count={unread} />
    </div>
  );
}
