from memoryd.entry import main

raise SystemExit(main())
