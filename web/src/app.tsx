// The app's frame: a header with the navigation, the notification bell and the user, an
// offline banner, and the page the address names.
import type { FunctionComponent } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { signOut } from "./auth/oidc";
import { NotificationBell } from "./components/notification-bell";
import { keepScrollingTablesFocusable } from "./components/scroll-tables";
import { ErrorBox, Loading, NotFound } from "./components/states";
import { online } from "./lib/online";
import { isStaff, me } from "./lib/me";
import { location, matchPath } from "./lib/router";
import { ROUTES, type PageProps, type PageRoute } from "./routes";

export function resolve(path: string): { route: PageRoute; params: Record<string, string> } | null {
  for (const route of ROUTES) {
    const params = matchPath(route.pattern, path);
    if (params) return { route, params };
  }
  return null;
}

// Below 600 px wide the header folds into a menu (styles.css): the bar keeps the name, the Menu
// button (aria-expanded) and the bell; Menu shows the navigation, the user's e-mail and Sign out
// under the bar. Escape closes it and gives the focus back to the button; a new page or a click
// outside closes it too. Wider, the button is not shown and the menu's parts sit in the bar.
function Header() {
  const user = me.value;
  const staff = isStaff(user);
  const path = location.value.path;
  const [open, setOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);

  // A new page closes the menu.
  useEffect(() => setOpen(false), [path]);

  // Attached in the render that opens the menu (a layout effect): a plain effect waits for the
  // next frame, and an Escape pressed right after opening went unheard.
  useLayoutEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      // The bell's own list, open inside the menu, closes first on its own Escape.
      if (event.key !== "Escape" || menu.current?.querySelector(".bell .menu")) return;
      setOpen(false);
      toggle.current?.focus();
    };
    const outside = (event: MouseEvent) => {
      const target = event.target as Node;
      if (!menu.current?.contains(target) && !toggle.current?.contains(target)) setOpen(false);
    };
    document.addEventListener("keydown", onKey);
    document.addEventListener("mousedown", outside);
    return () => {
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("mousedown", outside);
    };
  }, [open]);

  return (
    <header class="app-header">
      <a class="brand" href="/">
        Assay
      </a>
      <button
        type="button"
        class="menu-toggle secondary"
        ref={toggle}
        aria-expanded={open}
        aria-controls="header-menu"
        onClick={() => setOpen((o) => !o)}
      >
        Menu
      </button>
      <div id="header-menu" class={`header-menu${open ? " open" : ""}`} ref={menu}>
        <nav aria-label="Main">
          {staff && <a href="/console/tasks">Tasks</a>}
          {staff && <a href="/console/drafts">Drafts</a>}
          {staff && <a href="/console/templates">Templates</a>}
          {staff && <a href="/console/analytics">Analytics</a>}
          <a href="/attempts">My assessments</a>
        </nav>
        <div class="header-end">
          {user && <NotificationBell />}
          {user && <span class="user">{user.email}</span>}
          {user && (
            <button type="button" class="link sign-out" onClick={() => void signOut()}>
              Sign out
            </button>
          )}
        </div>
      </div>
    </header>
  );
}

/** "Skip to content": the router would take the #main link for a page change, so it moves the focus itself. */
function skipToMain(event: MouseEvent) {
  event.preventDefault();
  const main = document.getElementById("main");
  if (!main) return;
  main.focus();
  main.scrollIntoView();
}

function Page({ route, params }: { route: PageRoute; params: Record<string, string> }) {
  // Kept with the route it belongs to: until the new route's module is there, the old page must
  // not render with the new address's parameters.
  const [loaded, setLoaded] = useState<{ route: PageRoute; page: FunctionComponent<PageProps> } | { route: PageRoute; error: string } | null>(null);
  useEffect(() => {
    let alive = true;
    document.title = `${route.title} · Assay`;
    route.load().then(
      (page) => alive && setLoaded({ route, page }),
      () => alive && setLoaded({ route, error: "This page could not be loaded; check your connection and reload." }),
    );
    return () => {
      alive = false;
    };
  }, [route]);
  if (!loaded || loaded.route !== route) return <Loading />;
  if ("error" in loaded) return <ErrorBox message={loaded.error} onRetry={() => window.location.reload()} />;
  const Component = loaded.page;
  return <Component params={params} query={location.value.query} />;
}

export function App() {
  const found = resolve(location.value.path);
  useEffect(() => keepScrollingTablesFocusable(document.getElementById("main")!), []);
  return (
    <>
      <a class="skip" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      {found?.route.auth !== "none" && <Header />}
      {!online.value && (
        <p class="offline" role="status">
          You are offline. Changes are kept in this browser and saved when the connection returns.
        </p>
      )}
      <main id="main" tabIndex={-1}>
        {!found ? (
          <NotFound message={`There is no page at ${location.value.path}.`} back={{ href: "/", label: "Go to the home page" }} />
        ) : found.route.staff && !isStaff(me.value) ? (
          <ErrorBox message="This page is for interviewers. Your session has no interviewer role in any organization." />
        ) : (
          <Page route={found.route} params={found.params} />
        )}
      </main>
    </>
  );
}
