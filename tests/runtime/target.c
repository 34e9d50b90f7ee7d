/* A library that tests dlopen: its code pages hold only instructions. */
int xom_target_add(int a, int b);
int xom_target_add(int a, int b)
{
	return a * 3 + b;
}
