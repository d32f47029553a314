// Renders the safe Markdown subset (markdown.ts) as elements: text is always text, never HTML.
import { parseMarkdown, type Block, type Inline } from "./markdown";

function InlineView({ nodes }: { nodes: Inline[] }) {
  return (
    <>
      {nodes.map((node, i) => {
        switch (node.type) {
          case "text":
            return node.text;
          case "code":
            return <code key={i}>{node.text}</code>;
          case "strong":
            return (
              <strong key={i}>
                <InlineView nodes={node.children} />
              </strong>
            );
          case "em":
            return (
              <em key={i}>
                <InlineView nodes={node.children} />
              </em>
            );
          case "link":
            return (
              <a key={i} href={node.href} target="_blank" rel="noopener noreferrer">
                <InlineView nodes={node.children} />
              </a>
            );
          case "break":
            return <br key={i} />;
        }
      })}
    </>
  );
}

function BlockView({ block, headingBase }: { block: Block; headingBase: number }) {
  switch (block.type) {
    case "heading": {
      const Tag = `h${Math.min(6, block.level + headingBase - 1)}` as "h1" | "h2" | "h3" | "h4" | "h5" | "h6";
      return (
        <Tag>
          <InlineView nodes={block.children} />
        </Tag>
      );
    }
    case "paragraph":
      return (
        <p>
          <InlineView nodes={block.children} />
        </p>
      );
    case "code":
      return (
        <pre tabIndex={0}>
          <code>{block.text}</code>
        </pre>
      );
    case "list": {
      const items = block.items.map((item, i) => (
        <li key={i}>
          <InlineView nodes={item} />
        </li>
      ));
      return block.ordered ? <ol start={block.start}>{items}</ol> : <ul>{items}</ul>;
    }
    case "quote":
      return (
        <blockquote>
          {block.children.map((child, i) => (
            <BlockView key={i} block={child} headingBase={headingBase} />
          ))}
        </blockquote>
      );
    case "rule":
      return <hr />;
  }
}

/** `headingBase`: the level a Markdown `#` heading gets, so the page's outline stays in order. */
export function Markdown({ source, headingBase = 3 }: { source: string; headingBase?: number }) {
  return (
    <div class="markdown">
      {parseMarkdown(source).map((block, i) => (
        <BlockView key={i} block={block} headingBase={headingBase} />
      ))}
    </div>
  );
}
