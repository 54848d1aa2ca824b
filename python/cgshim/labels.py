"""A record's labels and the test ids they name (the pytest plugin; no
pytest needed to import it)."""

# The shim keeps 511 bytes of a label (shim/labels.h); a longer one is cut
# and ends in this mark (the record also says labels_truncated).
MORE = "\u2026"


def label_names(label, nodeid, ids):
    """Whether a record's label names test nodeid: the same text, or a label
    the shim cut (ends in MORE) whose prefix starts nodeid and no other of
    the session's test ids (ambiguous: it names none)."""
    if label == nodeid:
        return True
    if not label.endswith(MORE) or not nodeid.startswith(label[:-1]):
        return False
    p = label[:-1]
    return sum(1 for i in ids if i.startswith(p)) == 1


def joined_names(joined, nodeid, ids):
    """label_names for a report's label path ("a > b", outermost first): its
    outermost label names nodeid."""
    if joined == nodeid or joined.startswith(nodeid + " > "):
        return True
    k = joined.find(MORE)
    return (k >= 0 and (k + 1 == len(joined) or joined.startswith(" > ", k + 1))
            and label_names(joined[:k + 1], nodeid, ids))
