// The options a new task is made with, whether imported from a pull request or drafted from an
// issue: tags, visibility and the AI assistant (and what a form adds between them).
import type { ComponentChildren } from "preact";
import type { Visibility } from "./task-fields";

export interface NewTaskOptionsValue {
  tags: string;
  visibility: Visibility;
  ai: boolean;
}

export const NEW_TASK_OPTIONS: NewTaskOptionsValue = { tags: "", visibility: "PRIVATE_ORG", ai: false };

export function NewTaskOptions(props: {
  id: string;
  value: NewTaskOptionsValue;
  onChange: (value: NewTaskOptionsValue) => void;
  /** When a PUBLIC task becomes visible to everyone: "once ready", "once published". */
  publicWhen: string;
  children?: ComponentChildren;
}) {
  const { id, value, onChange } = props;
  return (
    <>
      <div class="row">
        <div>
          <label for={`${id}-tags`}>Tags (separated by commas)</label>
          <input id={`${id}-tags`} type="text" value={value.tags} onInput={(e) => onChange({ ...value, tags: e.currentTarget.value })} />
        </div>
        {props.children}
        <div>
          <label for={`${id}-visibility`}>Visibility</label>
          <select id={`${id}-visibility`} value={value.visibility} onChange={(e) => onChange({ ...value, visibility: e.currentTarget.value as Visibility })}>
            <option value="PRIVATE_ORG">Private to the organization</option>
            <option value="PUBLIC">Public {props.publicWhen}</option>
          </select>
        </div>
      </div>
      <div class="check">
        <input id={`${id}-ai`} type="checkbox" checked={value.ai} onChange={(e) => onChange({ ...value, ai: e.currentTarget.checked })} />
        <label for={`${id}-ai`}>Candidates may use the AI assistant</label>
      </div>
    </>
  );
}
