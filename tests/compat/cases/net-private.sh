# net-private: the sandbox's servers cannot be reached from the host (moat as root).
net_private
