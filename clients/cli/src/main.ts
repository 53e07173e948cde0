/** `mdp`: the command line (issue 14 builds its commands). */
process.stdout.write('mdp 0.4.7\n');
