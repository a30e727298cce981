/** What the alternatives' handlers are invoked with: the labels a request line carries. */
export interface AlternativeEvent {
  readonly requestId: string;
  readonly sub: string;
}
