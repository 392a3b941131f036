"""Retrieval rules beyond word overlap, pure (no store, no index): what a query asks for
(``query``: its words without stop words, the times it names) and how candidates are re-ranked
(``rank``: neighbour fusion within a conversation, the date boost). ``lintaid.search`` applies
them to what the index returns."""
