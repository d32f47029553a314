import { unreadCount } from "../lib/notification-socket";

export function NotificationBell() {
  return <span class="bell">{unreadCount.value}</span>;
}
