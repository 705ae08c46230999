"""The real-cluster suite (`make e2e`): emitted trees on a real kube-apiserver."""
