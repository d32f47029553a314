// The keystroke playback on the replay page (docs/web-app.md, "Keystroke playback"): the
// candidate's files as they were typed, at 1×, 4× and 16×, with jumps to the saves, runs and
// pastes. Once asked for, it starts as soon as the first page of the recording is in; the rest
// loads behind it. The logic is in keystroke-playback.ts.
import { useEffect, useRef, useState } from "preact/hooks";
import { ErrorBox, Loading } from "../components/states";
import { api, call } from "../lib/data";
import { describe } from "../lib/errors";
import { formatDateTime, plural } from "./format";
import {
  formatClock,
  initialPlayer,
  jump,
  pause,
  play,
  Recording,
  seek,
  setSpeed,
  SPEEDS,
  tick,
  type MarkerKind,
  type PlaybackMarker,
  type PlayerState,
} from "./keystroke-playback";

const PAGE = 2000;

interface Loaded {
  recording: Recording;
  markers: PlaybackMarker[];
  complete: boolean;
  capped: boolean;
}

const JUMPS: { kind: MarkerKind; label: string }[] = [
  { kind: "save", label: "save" },
  { kind: "run", label: "run" },
  { kind: "paste", label: "paste" },
];

function readPage(attemptId: string, page: number) {
  return call(api.GET("/api/v1/attempts/{attempt_id}/keystrokes", { params: { path: { attempt_id: attemptId }, query: { page, limit: PAGE } } }));
}

/**
 * Read when the reviewer asks for it: the replay page loads with its own calls, the timeline and
 * the save history (docs/web-app.md, "Requests"), and a long recording is pages more.
 */
export function KeystrokePlayback({ attemptId }: { attemptId: string }) {
  const [shown, setShown] = useState(false);
  if (shown) return <KeystrokePlayer attemptId={attemptId} />;
  return (
    <section class="box" aria-labelledby="playback-heading">
      <h2 id="playback-heading">Keystroke playback</h2>
      <button type="button" onClick={() => setShown(true)}>
        Play the edits back
      </button>
    </section>
  );
}

function KeystrokePlayer({ attemptId }: { attemptId: string }) {
  const [loaded, setLoaded] = useState<Loaded>();
  const [error, setError] = useState<string>();
  const [, setPages] = useState(0);
  const [player, setPlayer] = useState<PlayerState>(initialPlayer);
  const [chosen, setChosen] = useState<string | null>(null);
  const playerRef = useRef(player);
  playerRef.current = player;

  useEffect(() => {
    let alive = true;
    setLoaded(undefined);
    setError(undefined);
    setPlayer(initialPlayer);
    setChosen(null);
    void (async () => {
      try {
        const first = await readPage(attemptId, 1);
        const recording = new Recording();
        recording.append(first.items);
        const state: Loaded = { recording, markers: first.markers ?? [], complete: first.pagination.pages <= 1, capped: first.recording.recording === "capped" };
        if (!alive) return;
        setLoaded(state);
        // The rest behind the first frame, page after page, in order.
        for (let page = 2; page <= first.pagination.pages && alive; page++) {
          const next = await readPage(attemptId, page);
          if (!alive) return;
          recording.append(next.items);
          state.complete = page >= next.pagination.pages;
          setPages(page);
        }
        state.complete = true;
        setPages((n) => n + 1);
      } catch (e) {
        if (alive) setError(describe(e));
      }
    })();
    return () => {
      alive = false;
    };
  }, [attemptId]);

  useEffect(() => {
    if (!player.playing || !loaded) return;
    let last = performance.now();
    let frame = requestAnimationFrame(function step(now) {
      setPlayer((s) => tick(loaded.recording, s, now - last, loaded.complete));
      last = now;
      frame = requestAnimationFrame(step);
    });
    return () => cancelAnimationFrame(frame);
  }, [player.playing, loaded]);

  if (error) return <ErrorBox message={`The keystroke recording could not be loaded: ${error}`} />;
  if (!loaded) return <Loading what="Loading the keystroke recording" />;
  const { recording, markers } = loaded;
  if (recording.length === 0) {
    return (
      <section class="box" aria-labelledby="playback-heading">
        <h2 id="playback-heading">Keystroke playback</h2>
        <p class="muted">No edits were recorded for this attempt.</p>
      </section>
    );
  }

  const last = recording.editBefore(player.position);
  // The file shown: the one chosen, else the one typed in last (the first file before any edit).
  const path = chosen ?? last?.path ?? recording.paths[0]!;
  const text = recording.document(path, player.position)?.toString() ?? "";
  const to = (next: PlayerState) => setPlayer(next);

  return (
    <section class="box" aria-labelledby="playback-heading">
      <h2 id="playback-heading">Keystroke playback</h2>
      {loaded.capped && <p class="muted">The recording reached its cap; edits after that were not recorded.</p>}
      <div class="row">
        <button type="button" onClick={() => to(player.playing ? pause(player) : play(recording, player))}>
          {player.playing ? "Pause" : "Play"}
        </button>
        <span role="group" aria-label="Speed">
          {SPEEDS.map((speed) => (
            <button key={speed} type="button" class={speed === player.speed ? "" : "secondary"} aria-pressed={speed === player.speed} onClick={() => to(setSpeed(player, speed))}>
              {speed}×
            </button>
          ))}
        </span>
        <span aria-live="off">
          {formatClock(player.clock)} / {formatClock(recording.duration)} · edit {player.position} of {recording.length}
          {!loaded.complete && " (loading more)"}
        </span>
      </div>
      <input
        class="scrubber"
        type="range"
        min={0}
        max={recording.length}
        value={player.position}
        aria-label="Playback position (edits)"
        onInput={(e) => to(seek(recording, player, Number((e.target as HTMLInputElement).value)))}
      />
      <div class="row">
        {JUMPS.map(({ kind, label }) => {
          const count = markers.filter((m) => m.kind === kind).length;
          return (
            <span key={kind} role="group" aria-label={`Jump to a ${label} (${plural(count, label, `${label}s`)})`}>
              <button type="button" class="secondary" disabled={count === 0} onClick={() => to(jump(recording, markers, playerRef.current, kind, -1))}>
                ← {label}
              </button>
              <button type="button" class="secondary" disabled={count === 0} onClick={() => to(jump(recording, markers, playerRef.current, kind, 1))}>
                {label} →
              </button>
            </span>
          );
        })}
      </div>
      {recording.paths.length > 1 && (
        <div class="tabs" role="tablist" aria-label="Files">
          {recording.paths.map((p) => (
            <button key={p} type="button" role="tab" aria-selected={p === path} onClick={() => setChosen(p)}>
              {p}
            </button>
          ))}
          {chosen !== null && (
            <button type="button" class="secondary" onClick={() => setChosen(null)}>
              Follow the typing
            </button>
          )}
        </div>
      )}
      <p class="small muted">
        {path}
        {last && ` · last edit ${formatDateTime(new Date(last.t).toISOString())}`}
        {last?.paste && (
          <>
            {" "}
            <span class="badge">paste</span>
          </>
        )}
      </p>
      <pre aria-label={`${path} at this point`}>{text}</pre>
    </section>
  );
}
