"""The one exception kube-local raises for anything the user can act on."""


class KubeLocalError(Exception):
    """A failure with a message meant for a person: what went wrong and what to do about it."""
