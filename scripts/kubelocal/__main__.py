"""``python -m kubelocal``: the kube-local command line."""

from kubelocal.cli import main

raise SystemExit(main())
