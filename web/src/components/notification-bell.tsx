// The header's notification bell: the unread count from the notification socket, and a list of
// the newest notifications (GET /notifications) that opens under it, each linking to what it is
// about. New ones join the list as the socket brings them; opening one marks it read, "Mark all
// read" marks what is shown.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, call } from "../lib/data";
import { describe } from "../lib/errors";
import { isStaff, me } from "../lib/me";
import { onNotification, unreadCount, type AppNotification } from "../lib/notification-socket";
import { markRead } from "./notification-list";
import { notificationText } from "./notification-text";
import { Empty, ErrorBox, Loading } from "./states";

const SHOWN = 20;

function when(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: "short", timeStyle: "short" });
}

// Drawn, not an emoji: systems without a color-emoji font show an emoji as an empty box.
function BellIcon() {
  return (
    <svg class="bell-icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
      <path
        fill="currentColor"
        d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3.5a1.5 1.5 0 0 0-3 0v.66A7 7 0 0 0 5 11v5l-2 2v1h18v-1Z"
      />
    </svg>
  );
}

export function NotificationBell() {
  const [open, setOpen] = useState(false);
  const [items, setItems] = useState<AppNotification[]>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const unread = unreadCount.value;
  const staff = isStaff(me.value);

  useEffect(
    () =>
      onNotification((n) => {
        setItems((list) => (list ? [n, ...list.filter((x) => x.id !== n.id)].slice(0, SHOWN) : list));
      }),
    [],
  );

  const load = () => {
    setError(undefined);
    call(api.GET("/api/v1/notifications", { params: { query: { limit: SHOWN } } })).then(
      (page) => setItems(page.items),
      (e: unknown) => setError(describe(e)),
    );
  };

  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) button.current?.focus();
  };

  useEffect(() => {
    if (!open) return;
    load();
    const outside = (event: MouseEvent) => {
      if (root.current && !root.current.contains(event.target as Node)) close(false);
    };
    const escape = (event: KeyboardEvent) => {
      if (event.key === "Escape") close(true);
    };
    document.addEventListener("mousedown", outside);
    document.addEventListener("keydown", escape);
    return () => {
      document.removeEventListener("mousedown", outside);
      document.removeEventListener("keydown", escape);
    };
  }, [open]);

  const markAll = async () => {
    const upTo = Math.max(0, ...(items ?? []).map((n) => n.id));
    if (upTo === 0) return;
    setBusy(true);
    setError(undefined);
    try {
      const answer = await call(api.POST("/api/v1/notifications/read-all", { body: { up_to_id: upTo } }));
      unreadCount.value = answer.unread;
      const now = new Date().toISOString();
      setItems((list) => list && markRead(list, (n) => n.id <= upTo, now));
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(false);
    }
  };

  // Shown read at once, as the page it links to opens; the socket's `read` message then sets the
  // exact count. A mark that fails shows it unread again, so it is not taken for seen.
  const opened = (n: AppNotification) => {
    close(false);
    if (n.read_at) return;
    setItems((list) => list && markRead(list, (x) => x.id === n.id, new Date().toISOString()));
    unreadCount.value = Math.max(0, unreadCount.value - 1);
    call(api.POST("/api/v1/notifications/{notification_id}/read", { params: { path: { notification_id: n.id } } })).catch(() => {
      setItems((list) => list?.map((x) => (x.id === n.id ? n : x)));
      unreadCount.value += 1;
    });
  };

  const label = unread > 0 ? `Notifications, ${unread} unread` : "Notifications, none unread";
  return (
    <div class="bell" ref={root}>
      <button type="button" ref={button} aria-expanded={open} aria-controls="notification-menu" aria-label={label} onClick={() => (open ? close(false) : setOpen(true))}>
        <BellIcon />
        {unread > 0 && (
          <span class="count" aria-hidden="true">
            {unread > 99 ? "99+" : unread}
          </span>
        )}
      </button>
      {open && (
        <section class="menu" id="notification-menu" aria-label="Notifications">
          <div class="menu-head">
            <strong>Notifications</strong>
            <button type="button" class="secondary" disabled={busy || !items?.some((n) => !n.read_at)} onClick={() => void markAll()}>
              Mark all read
            </button>
          </div>
          {error && <ErrorBox message={error} onRetry={load} />}
          {!items && !error && <Loading />}
          {items?.length === 0 && <Empty>No notifications yet.</Empty>}
          {items && items.length > 0 && (
            <ul class="notifications">
              {items.map((n) => {
                const { text, href } = notificationText(n, staff);
                return (
                  <li key={n.id} class={n.read_at ? "read" : "unread"}>
                    {!n.read_at && <span class="new">New: </span>}
                    {href ? (
                      <a href={href} onClick={() => opened(n)}>
                        {text}
                      </a>
                    ) : (
                      <span>{text}</span>
                    )}
                    <time class="muted" dateTime={n.created_at}>
                      {when(n.created_at)}
                    </time>
                  </li>
                );
              })}
            </ul>
          )}
        </section>
      )}
    </div>
  );
}
