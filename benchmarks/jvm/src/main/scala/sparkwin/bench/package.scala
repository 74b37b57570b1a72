package sparkwin.bench
