// Which answer may still land: a page asks again when its filters change, and the older
// request can answer after the newer one. One shared "still mounted" flag cannot tell them
// apart (the older answer would overwrite the newer); a ticket per request can.
export class Latest {
  private issued = 0;

  /** A ticket for a new request; it holds while no newer ticket is taken and nothing is cancelled. */
  next(): () => boolean {
    const mine = ++this.issued;
    return () => mine === this.issued;
  }

  /** No answer asked for so far may land (the page has gone, or is asking again). */
  cancel(): void {
    this.issued++;
  }
}
