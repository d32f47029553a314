// The app's frame: a header with the navigation, the notification bell and the user, an
// offline banner, and the page the address names.
import type { FunctionComponent } from "preact";
import { useEffect, useState } from "preact/hooks";
import { signOut } from "./auth/oidc";
import { NotificationBell } from "./components/notification-bell";
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

function Header() {
  const user = me.value;
  const staff = isStaff(user);
  return (
    <header class="app-header">
      <a class="brand" href="/">
        Assay
      </a>
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
          <button type="button" class="link" onClick={() => void signOut()}>
            Sign out
          </button>
        )}
      </div>
    </header>
  );
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
  return (
    <>
      <a class="skip" href="#main">
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
