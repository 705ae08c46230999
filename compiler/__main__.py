from compiler.cli import main

raise SystemExit(main())
