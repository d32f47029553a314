// Boots the app: its settings, then sign-in (or the sign-in callback), then who the user is,
// then the page. An IDE session page (/ide) brings its own credential and skips sign-in.
import { render } from "preact";
import { App, resolve } from "./app";
import { CALLBACK_PATH, completeSignIn, configureAuth, signIn } from "./auth/oidc";
import { currentToken, signInReason } from "./auth/session";
import { ErrorBox, Loading } from "./components/states";
import { loadConfig } from "./config";
import { describe } from "./lib/errors";
import { loadMe } from "./lib/me";
import { startNotifications } from "./lib/notification-socket";
import { interceptLinks, navigate } from "./lib/router";

const root = document.getElementById("app")!;

function SignInFailed({ message }: { message: string }) {
  return (
    <main id="main" class="sign-in">
      <h1>Sign-in</h1>
      <ErrorBox message={message} />
      <button type="button" onClick={() => void signIn(window.location.pathname === CALLBACK_PATH ? "/" : window.location.pathname + window.location.search)}>
        Sign in
      </button>
    </main>
  );
}

async function boot(): Promise<void> {
  // index.html's placeholder is no node of Preact's, so Preact would leave it below the app.
  root.replaceChildren();
  render(<Loading what="Loading Assay" />, root);
  interceptLinks();
  const config = await loadConfig();
  configureAuth(config);
  const here = new URL(window.location.href);
  if (here.pathname === CALLBACK_PATH) {
    const back = await completeSignIn(here);
    navigate(back, true);
  }
  const route = resolve(window.location.pathname)?.route;
  if (route?.auth !== "none") {
    if (!currentToken()) {
      render(<Loading what="Signing you in" />, root);
      await signIn(window.location.pathname + window.location.search);
      return;
    }
    await loadMe();
    startNotifications();
  }
  render(<App />, root);
}

boot().catch((error: unknown) => {
  render(<SignInFailed message={signInReason.value ?? describe(error)} />, root);
});
