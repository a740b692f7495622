/* test_catalog.c - the catalogue table: any column of any level, units and box from text, CSV and stream chunks, bad rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "check.h"

static fk_cattab tab;

static int read_tab(const char *text, fk_error *err)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    int st = fk_cattab_read(f, "cat", &tab, err);
    fclose(f);
    return st;
}

int main(void)
{
    fk_error err = {0};
    double *v;
    size_t n;
    const char *text = "# halostats\n# box 2 origin 0 periodic 1 (the stream's length unit)\n"
                       "# units: length kpc, mass Msun, velocity km/s; one stream unit is 10, 1, 1 of them\n"
                       "#  1 level    1          level of the hierarchy\n"
                       "#  5 mass     Msun       sum of member masses\n"
                       "# level host id n mass m200c\n"
                       "0 0 1 5 1000 900\n0 0 2 4 150 nan\n1 1 1 3 500 400\n";
    CHECK(read_tab(text, &err) == FK_OK);
    CHECK(tab.ncols == 6 && tab.nrows == 3 && tab.level == 0);
    CHECK(tab.has_box && tab.box == 2 && tab.periodic == 1 && tab.length == 10 && !strcmp(tab.length_name, "kpc"));
    CHECK(!strcmp(tab.units[4], "Msun") && !tab.units[5][0] && fk_cattab_find(&tab, "m200c") == 5);
    /* level 0 of m200c: 900 and nan, in order; level 1 alone */
    CHECK(fk_cattab_column(&tab, "m200c", 0, "cat", &v, &n, &err) == FK_OK && n == 2 && v[0] == 900 && isnan(v[1]));
    free(v);
    CHECK(fk_cattab_column(&tab, "mass", 1, "cat", &v, &n, &err) == FK_OK && n == 1 && v[0] == 500);
    free(v);
    CHECK(fk_cattab_column(&tab, "mass", 7, "cat", &v, &n, &err) == FK_OK && n == 0);
    free(v);
    CHECK(fk_cattab_column(&tab, "m500c", 0, "cat", &v, &n, &err) == FK_EMISSING);
    CHECK_MSG(!strcmp(err.msg, "cat: no column 'm500c' in the catalogue"), "%s", err.msg);
    fk_cattab_free(&tab);

    /* CSV: no box, no level column: level 0 is every row, no other level */
    fk_error_clear(&err);
    CHECK(read_tab("n, mass\n3,1.5\n4 ,2\n", &err) == FK_OK);
    CHECK(tab.ncols == 2 && tab.nrows == 2 && tab.level == -1 && !tab.has_box && tab.length == 1);
    CHECK(fk_cattab_column(&tab, "mass", 0, "cat", &v, &n, &err) == FK_OK && n == 2 && v[1] == 2);
    free(v);
    CHECK(fk_cattab_column(&tab, "mass", 1, "cat", &v, &n, &err) == FK_EMISSING);
    CHECK_MSG(!strcmp(err.msg, "cat: no level column, so no level 1"), "%s", err.msg);
    fk_cattab_free(&tab);

    /* halostats' CSV header: name[unit], the unit apart; a bare name has none */
    fk_error_clear(&err);
    CHECK(read_tab("level,n,mass[Msun/h],phi_mbp[(km/s)^2]\n0,3,1.5,-2\n", &err) == FK_OK);
    CHECK(tab.ncols == 4 && tab.level == 0 && fk_cattab_find(&tab, "mass") == 2 && fk_cattab_find(&tab, "phi_mbp") == 3);
    CHECK(!strcmp(tab.units[2], "Msun/h") && !strcmp(tab.units[3], "(km/s)^2") && !tab.units[1][0]);
    fk_cattab_free(&tab);

    /* bad rows: one line each, naming the line */
    fk_error_clear(&err);
    CHECK(read_tab("n,mass\n3,1\n4\n", &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "cat: line 3: 1 columns, the header names 2"), "%s", err.msg);
    fk_error_clear(&err);
    CHECK(read_tab("# n mass\n3 twenty\n", &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "cat: line 2: mass 'twenty' is not a number"), "%s", err.msg);
    fk_error_clear(&err);
    CHECK(read_tab("", &err) == FK_EFORMAT && !strcmp(err.msg, "cat: empty input"));
    CHECK(tab.nrows == 0 && tab.v == NULL);

    /* the stream's HCOL and HALO: units and the length unit from HCOL */
    const char *hcol = "columns 3\nlength_unit 1000\nlength_name kpc/h\ncolumn_1 level 1 l\n"
                       "column_2 id 1 i\ncolumn_3 mass Msun m\n";
    double rows[] = {0, 1, 2.5, 0, 2, 1.5, 1, 1, 0.5};
    fk_error_clear(&err);
    CHECK(fk_cattab_from_chunks(hcol, rows, 3, 3, "s", &tab, &err) == FK_OK);
    CHECK(tab.nrows == 3 && tab.level == 0 && tab.length == 1000 && !strcmp(tab.length_name, "kpc/h"));
    CHECK(!strcmp(tab.units[2], "Msun"));
    CHECK(fk_cattab_column(&tab, "mass", 1, "s", &v, &n, &err) == FK_OK && n == 1 && v[0] == 0.5);
    free(v);
    fk_cattab_free(&tab);
    CHECK(fk_cattab_from_chunks(hcol, rows, 3, 4, "s", &tab, &err) == FK_EFORMAT);
    CHECK_MSG(!strcmp(err.msg, "s: HCOL names 3 of the 4 columns of HALO"), "%s", err.msg);
    CHECK_DONE();
}
